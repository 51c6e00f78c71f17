// Package scripttest holds what khook's testscript suites share.
package scripttest

import (
	"errors"
	"os/exec"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

// Cmds are the custom script commands.
var Cmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": Exits}

// Exits is "exits N cmd args...": run a command and check its exit code is
// exactly N. testscript's "! exec" only tells zero from non-zero; khook's
// exit codes say which kind of failure it was.
func Exits(ts *testscript.TestScript, neg bool, args []string) {
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
