package e2e

import (
	"strings"
	"testing"
)

// TestSecretsNeverReachTheOutput: API errors that quote KHOOK_SECRET_*
// values (a namespace that does not exist, an object name the server
// rejects, a patch target, a wait expression) are printed masked, on
// stdout, stderr and in the JSON document alike.
func TestSecretsNeverReachTheOutput(t *testing.T) {
	const (
		token   = "Sup3r_Secret_t0ken"
		missing = "hush-hush-namespace"
	)
	ns := namespace(t)
	env := []string{"KHOOK_SECRET_TOKEN=" + token, "KHOOK_SECRET_MISSING_NS=" + missing}
	for _, format := range []string{"json", "text"} {
		args := []string{"apply", "-f", testdata("secret.yaml"), "--set", "NS=" + ns}
		if format == "json" {
			args = append(args, "-o", "json")
		}
		out := khook(t, invocation{Args: args, Env: env})
		if out.Code != 1 {
			t.Errorf("%s: exit code %d; want 1\nstderr:\n%s", format, out.Code, out.Stderr)
		}
		for _, secret := range []string{token, missing, strings.ToLower(token)} {
			for name, text := range map[string]string{"stdout": out.Stdout, "stderr": out.Stderr} {
				if strings.Contains(text, secret) {
					t.Errorf("%s: %s shows the secret %q:\n%s", format, name, secret, text)
				}
			}
		}
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
