// Package needtool is the one place a test says a tool it needs is missing.
// On a developer's machine the test skips, saying what to install; with
// KHOOK_REQUIRE_TOOLS=1 (CI, .ci/run) it fails naming the tool, so a run
// that could not test something never passes as if it had.
package needtool

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Env is the variable that turns a missing tool from a skip into a failure.
const Env = "KHOOK_REQUIRE_TOOLS"

// Required reports whether missing tools fail the test (KHOOK_REQUIRE_TOOLS=1).
func Required() bool { return os.Getenv(Env) == "1" }

// Missing ends the test because tool is absent or unusable: a skip with the
// message, or with KHOOK_REQUIRE_TOOLS=1 a failure that names the tool first.
func Missing(t testing.TB, tool, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("required tool %s is missing (%s=1): %s", tool, Env, msg)
	}
	t.Skip(msg)
}

// Path is the tool's path on PATH; where there is none it calls Missing
// with "<name> is not installed: <why>".
func Path(t testing.TB, name, why string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, "%s is not installed: %s", name, why)
	}
	return path
}
