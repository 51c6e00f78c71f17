package cli

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/cli/iostreams"
)

func TestRunExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"version"}, 0},
		{[]string{"--help"}, 0},
		{[]string{"nope"}, 2},
		{[]string{"validate", "--nope"}, 2},
		{[]string{"validate", "-f", "does-not-exist.yaml"}, 2},
		{[]string{"plan", "--offline", "--diff"}, 2},
		{[]string{"vars", "--format", "yaml"}, 2},
		{[]string{"render", "-f", "does-not-exist.yaml"}, 2},
		{[]string{"destroy", "-f", "does-not-exist.yaml"}, 2},
		// With --detailed-exitcode 2 is "changes pending": every failure
		// exits 1, a command line that does not parse too.
		{[]string{"plan", "--detailed-exitcode", "-f", "does-not-exist.yaml"}, 1},
		{[]string{"plan", "--detailed-exitcode", "stray"}, 1},
		{[]string{"plan", "--detailed-exitcode", "--nope"}, 1},
		{[]string{"plan", "--nope", "--detailed-exitcode"}, 1},
		{[]string{"plan", "--offline", "--detailed-exitcode"}, 1},
		{[]string{"plan", "--detailed-exitcode", "-o", "yaml"}, 1},
		{[]string{"plan", "--detailed-exitcode=false", "--nope"}, 2},
		{[]string{"plan", "--nope", "--", "--detailed-exitcode"}, 2},
		{[]string{"apply", "--detailed-exitcode"}, 2}, // apply has no such flag
	} {
		ios, _, errOut := iostreams.Test("")
		if got := Run(context.Background(), tc.args, ios); got != tc.code {
			t.Errorf("khook %s: exit %d, want %d\n%s", strings.Join(tc.args, " "), got, tc.code, errOut)
		}
	}
}

// The logger that commands (and any package using slog's default) write to
// is the redacted stderr, in the format --log-format asks for.
func TestRunLogsAreRedacted(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "khook.yaml")
	spec := "apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: demo\nsteps:\n  - name: a\n    rollout:\n      restart: deployment/${TOKEN}\n      namespace: default\n"
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, out, errOut := iostreams.Test("")
	ios.Environ = []string{"KHOOK_SECRET_TOKEN=s3cr3t"}
	defer slog.SetDefault(slog.Default())
	if code := Run(context.Background(), []string{"validate", "-f", file, "--log-format", "json"}, ios); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	slog.Info("restarting", "target", "deployment/s3cr3t")
	if !strings.Contains(errOut.String(), `"target":"deployment/***"`) {
		t.Errorf("log line not JSON or not masked: %q", errOut)
	}
	if strings.Contains(out.String()+errOut.String(), "s3cr3t") {
		t.Error("secret leaked")
	}
}
