package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A throwaway module with a passing, a skipping and a failing test, run
// through the built command as make test runs it: the plain go test lines,
// the failing test's output, the skips with their reasons, go test's exit
// status.
func TestSummaryOfARealGoTestRun(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "testsummary")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mod := filepath.Join(dir, "mod")
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a_test.go": `package a

import "testing"

func TestPasses(t *testing.T) { t.Log("quiet on success") }

func TestSkips(t *testing.T) {
	t.Log("looked for the tool")
	t.Skip("podman is not installed: this test runs containers with it")
}

func TestSub(t *testing.T) {
	t.Run("inner", func(t *testing.T) { t.Skipf("needs %d nodes", 3) })
}
`,
		"a/main_test.go": `package a

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) { fmt.Println("a's setup chatter"); os.Exit(m.Run()) }
`,
		"c/c.go": "package c\n",
		"b/b_test.go": `package b

import "testing"

func TestFails(t *testing.T) { t.Fatal("the plan said apply, want fail") }
`,
	}
	for name, text := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(pkgs ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"go", "test", "-json", "-count=1"}, pkgs...)...)
		cmd.Dir = mod
		// make test's GOFLAGS (-trimpath) kept, so the standard library
		// comes from the build cache.
		cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off")
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}

	out, code := run("./a")
	if code != 0 {
		t.Errorf("passing package: exit %d, want 0\n%s", code, out)
	}
	for _, want := range []string{
		"ok  \texample.com/m/a\t",
		"skipped: 2\n",
		"  example.com/m/a TestSkips: a_test.go:9: podman is not installed: this test runs containers with it\n",
		"  example.com/m/a TestSub/inner: a_test.go:13: needs 3 nodes\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"quiet on success", "=== RUN", "\nPASS\n", "a's setup chatter"} {
		if strings.Contains(out, not) {
			t.Errorf("output has %q, which plain go test does not print:\n%s", not, out)
		}
	}

	out, code = run("./a", "./b", "./c")
	if code != 1 {
		t.Errorf("failing package: exit %d, want go test's 1\n%s", code, out)
	}
	for _, want := range []string{"--- FAIL: TestFails", "b_test.go:5: the plan said apply, want fail", "FAIL\texample.com/m/b\t", "ok  \texample.com/m/a\t", "?   \texample.com/m/c\t[no test files]", "skipped: 2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The timeline names the packages that ran long, in the order they ended,
// with their start and end from the first event: where a slow run's time
// went. A short package is left out.
func TestTimelineListsLongPackagesByEnd(t *testing.T) {
	var out strings.Builder
	s := newSummary(&out)
	s.read(strings.NewReader(strings.Join([]string{
		`{"Time":"2026-11-28T10:00:00Z","Action":"start","Package":"m/slow"}`,
		`{"Time":"2026-11-28T10:01:40Z","Action":"start","Package":"m/quick"}`,
		`{"Time":"2026-11-28T10:01:45Z","Action":"pass","Package":"m/quick","Elapsed":5}`,
		`{"Time":"2026-11-28T10:05:00Z","Action":"fail","Package":"m/late","Elapsed":120}`,
		`{"Time":"2026-11-28T10:02:30Z","Action":"pass","Package":"m/slow","Elapsed":90}`,
	}, "\n")))
	s.printTimeline()
	want := "packages that ran 20s or more (seconds after go test's first event):\n" +
		"     60 to   150 (  90)  m/slow\n" +
		"    180 to   300 ( 120)  m/late\n"
	if out.String() != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestSlowTestsSlowestFirstWithoutSubtests(t *testing.T) {
	var out strings.Builder
	s := newSummary(&out)
	s.read(strings.NewReader(strings.Join([]string{
		`{"Action":"pass","Package":"m/a","Test":"TestQuick","Elapsed":3}`,
		`{"Action":"pass","Package":"m/a","Test":"TestSlow/sub","Elapsed":40}`,
		`{"Action":"pass","Package":"m/a","Test":"TestSlow","Elapsed":41}`,
		`{"Action":"fail","Package":"m/b","Test":"TestSlower","Elapsed":90}`,
	}, "\n")))
	s.printSlowTests()
	want := "tests that ran 30s or more (of 2, the 2 slowest):\n" +
		"     90  m/b TestSlower\n" +
		"     41  m/a TestSlow\n"
	if out.String() != want {
		t.Errorf("slow tests:\n%s\nwant:\n%s", out.String(), want)
	}
}
