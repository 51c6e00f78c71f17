// Package script runs khook's end-to-end CLI scenarios: testdata/*.txtar
// files executed by testscript against the real entry point.
package script

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/khook/khook/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the files that cmp compares stdout with, inside the .txtar archives")

func TestMain(m *testing.M) {
	testscript.RunMain(m, map[string]func() int{"khook": cli.Main})
}

// repoRoot is the module root, for scripts that compare with committed files.
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func TestScripts(t *testing.T) {
	root := repoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir:           "testdata",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", root)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "schema": // the committed schema exists (it lands with spec.Schema)
				_, err := os.Stat(filepath.Join(root, "docs", "schema", "v1", "khook.json"))
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": exits,
		},
	})
}

// exits N cmd args... runs a command and checks its exit code is exactly N
// (testscript's "! exec" only tells zero from non-zero; khook's exit codes
// say which kind of failure it was).
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit code", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}
