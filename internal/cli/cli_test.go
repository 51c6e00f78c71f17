package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/model"
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

// An apply or destroy that fails before it starts (its spec or plan file
// does not load) still prints the results document with -o json, naming the failure
// reason, and exits with its row of the table; text output prints none.
func TestApplyJSONDocumentWhenNothingStarted(t *testing.T) {
	dir := t.TempDir()
	invalid := filepath.Join(dir, "invalid.yaml")
	if err := os.WriteFile(invalid, []byte("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: demo}\nsteps:\n  - name: a\n    helm: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		reason string
		code   int
	}{
		{[]string{"apply", "-f", invalid, "-o", "json"}, model.ReasonValidation, 2},
		{[]string{"apply", "-f", filepath.Join(dir, "missing.yaml"), "-o", "json"}, model.ReasonValidation, 2},
		{[]string{"apply", "-f", invalid, "--plan", filepath.Join(dir, "nope.json"), "-o", "json"}, model.ReasonPlanNotFound, 1},
		{[]string{"destroy", "-f", invalid, "-o", "json"}, model.ReasonValidation, 2},
	} {
		ios, out, errOut := iostreams.Test("")
		code := Run(context.Background(), tc.args, ios)
		var res model.Results
		if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
			t.Errorf("khook %s: stdout is not a results document (%v):\n%s\nstderr:\n%s", strings.Join(tc.args, " "), err, out, errOut)
			continue
		}
		if code != tc.code || res.Status != model.RunFailed || res.FailureReason != tc.reason || res.Command != tc.args[0] || res.Error == "" {
			t.Errorf("khook %s: exit %d, document %+v; want exit %d, failed, %s, with the error", strings.Join(tc.args, " "), code, res, tc.code, tc.reason)
		}
		ios, out, _ = iostreams.Test("")
		if code := Run(context.Background(), tc.args[:len(tc.args)-2], ios); code != tc.code || out.Len() != 0 {
			t.Errorf("khook %s (text): exit %d, stdout %q; want exit %d and nothing on stdout", strings.Join(tc.args[:len(tc.args)-2], " "), code, out, tc.code)
		}
	}
}

// A sops-encrypted --var-file is opened through the factory's load options
// (spec reads no sops itself): its value reaches the spec as a secret,
// masked in what render prints; without a key that opens it, the command
// fails naming the file and its recipient.
func TestEncryptedVarFile(t *testing.T) {
	fixtures, err := filepath.Abs(filepath.Join("..", "..", "test", "e2e", "testdata", "sops"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "khook.yaml")
	spec := "apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: demo\nvars:\n  greeting: {type: string, required: true}\nsteps:\n  - name: a\n    apply:\n      namespace: default\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: x}\n            data: {g: \"${greeting}\"}\n"
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	args := []string{"render", "-f", file, "--var-file", filepath.Join(fixtures, "values.enc.yaml")}
	t.Setenv("SOPS_AGE_KEY_FILE", filepath.Join(fixtures, "TEST-ONLY-age.key"))
	ios, out, errOut := iostreams.Test("")
	if code := Run(context.Background(), args, ios); code != 0 || !strings.Contains(out.String(), `data: {g: "***"}`) || strings.Contains(out.String()+errOut.String(), "Values-S3cret-9f2b") {
		t.Errorf("with the key: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Setenv("SOPS_AGE_KEY_FILE", filepath.Join(fixtures, "TEST-ONLY-wrong-age.key"))
	ios, _, errOut = iostreams.Test("")
	if code := Run(context.Background(), args, ios); code != 2 || !strings.Contains(errOut.String(), "values.enc.yaml: no available key opens it; it was encrypted for age age1nydme8") {
		t.Errorf("with a key that does not open it: exit %d, stderr:\n%s", code, errOut)
	}
}
