package needtool

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how the test ended instead of
// ending the real one (Skip and Fatal stop the goroutine: run it in one).
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped, r.msg = true, args[0].(string)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func end(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	<-done
	return r
}

func TestMissingSkipsOrFailsNamingTheTool(t *testing.T) {
	const tool = "khook-no-such-tool"
	t.Setenv(Env, "")
	r := end(t, func(tb testing.TB) { Path(tb, tool, "apt-get install -y it") })
	if !r.skipped || r.failed || r.msg != tool+" is not installed: apt-get install -y it" {
		t.Errorf("without %s: skipped %v failed %v %q, want a skip saying what to install", Env, r.skipped, r.failed, r.msg)
	}
	t.Setenv(Env, "1")
	r = end(t, func(tb testing.TB) { Path(tb, tool, "apt-get install -y it") })
	if !r.failed || r.skipped || !strings.HasPrefix(r.msg, "required tool "+tool+" is missing (KHOOK_REQUIRE_TOOLS=1): ") {
		t.Errorf("with %s=1: skipped %v failed %v %q, want a failure naming the tool", Env, r.skipped, r.failed, r.msg)
	}
	r = end(t, func(tb testing.TB) { Path(tb, "go", "") })
	if r.failed || r.skipped {
		t.Errorf("go is on PATH, yet the test ended: %q", r.msg)
	}
}
