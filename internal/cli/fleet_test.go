package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/cli/iostreams"
)

// --fleet and --cluster go together on plan and apply; a misspelt cluster
// and an invalid fleet file are usage errors (exit 2) that say why.
func TestFleetFlagsOnPlanAndApply(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "khook.yaml"), []byte("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: d}\nsteps: [{name: w, wait: {for: delete, on: pods/x, timeout: 1s}}]\n"), 0o644)
	fleet := filepath.Join(dir, "fleet.yaml")
	os.WriteFile(fleet, []byte("apiVersion: khook.io/v1\nkind: Fleet\nmetadata: {name: f}\nfiles: [khook.yaml]\nclusters:\n  - {name: prod-eu, context: eu}\n  - {name: prod-us, context: us}\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("apiVersion: khook.io/v1\nkind: Fleet\nmetadata: {name: f}\nfiles: [nope.yaml]\nclusters: [{name: a}]\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "--cluster", "prod-eu"}, "--cluster needs --fleet"},
		{[]string{"apply", "--fleet", fleet}, "add --cluster NAME"},
		{[]string{"plan", "--fleet", fleet, "--cluster", "prod-ue"}, `has no cluster "prod-ue"`},
		{[]string{"plan", "--fleet", bad, "--cluster", "a"}, "bad.yaml:4:9: files.0: " + filepath.Join(dir, "nope.yaml") + " does not exist"},
		{[]string{"fleet", "matrix", "-f", fleet, "--selector", "env"}, "is not LABEL=VALUE"},
	} {
		ios, _, errOut := iostreams.Test("")
		if code := Run(context.Background(), tc.args, ios); code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("khook %s: exit %d, want 2 saying %q:\n%s", strings.Join(tc.args, " "), code, tc.want, errOut)
		}
	}
}
