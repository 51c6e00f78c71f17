package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/khook/khook/model"
)

// TestSecretsNeverReachTheOutput: API errors that quote KHOOK_SECRET_*
// values (a namespace that does not exist, an object name the server
// rejects, a patch target, a wait expression) are printed masked, on
// stdout, stderr and in the JSON document alike.
func TestSecretsNeverReachTheOutput(t *testing.T) {
	for format, out := range runSecretSpec(t, "apply") {
		if format != "json" {
			continue
		}
		// The errors did quote the secrets: the test is only worth something
		// if the masks are there.
		masked := 0
		for _, s := range out.Results.Steps {
			if s.Status != failed {
				t.Errorf("step %s is %s; want failed", s.Name, s.Status)
			}
			if strings.Contains(s.Error, "***") {
				masked++
			}
		}
		if masked < len(out.Results.Steps)-1 {
			t.Errorf("only %d of %d step errors show a mask; the spec no longer provokes errors quoting the secrets:\n%s",
				masked, len(out.Results.Steps), out.Stdout)
		}
	}
}

// TestSecretsNeverReachThePlan: the same errors, predicted by plan, are
// masked in its text and JSON alike (executors' Plan return them as they
// are: plan.Live redacts the plan, and the output paths again).
func TestSecretsNeverReachThePlan(t *testing.T) {
	for format, out := range runSecretSpec(t, "plan") {
		if format != "json" {
			continue
		}
		var p model.Plan
		if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil {
			t.Fatalf("stdout is not a plan: %v\n%s", err, out.Stdout)
		}
		// The predictions did quote the secrets: the test is only worth
		// something if the masks are there.
		masked := 0
		for _, s := range p.Steps {
			if strings.Contains(s.Reason, "***") {
				masked++
			}
		}
		if masked < 2 {
			t.Errorf("only %d step reasons show a mask; the spec no longer provokes predictions quoting the secrets:\n%s", masked, out.Stdout)
		}
	}
}

// runSecretSpec runs khook cmd on testdata/secret.yaml with -o json and
// with text output, and checks that each exits 1 (a step fails, or would)
// and that no secret value, nor its lower case, is on stdout or stderr.
func runSecretSpec(t *testing.T, cmd string) map[string]outcome {
	const (
		token   = "Sup3r_Secret_t0ken"
		missing = "hush-hush-namespace"
	)
	ns := namespace(t)
	env := []string{"KHOOK_SECRET_TOKEN=" + token, "KHOOK_SECRET_MISSING_NS=" + missing}
	outs := map[string]outcome{}
	for _, format := range []string{"json", "text"} {
		args := []string{cmd, "-f", testdata("secret.yaml"), "--set", "NS=" + ns}
		if format == "json" {
			args = append(args, "-o", "json")
		}
		out := khook(t, invocation{Args: args, Env: env})
		if out.Code != 1 {
			t.Errorf("%s %s: exit code %d; want 1\nstdout:\n%s\nstderr:\n%s", cmd, format, out.Code, out.Stdout, out.Stderr)
		}
		for _, secret := range []string{token, missing, strings.ToLower(token)} {
			for name, text := range map[string]string{"stdout": out.Stdout, "stderr": out.Stderr} {
				if strings.Contains(text, secret) {
					t.Errorf("%s %s: %s shows the secret %q:\n%s", cmd, format, name, secret, text)
				}
			}
		}
		outs[format] = out
	}
	return outs
}
