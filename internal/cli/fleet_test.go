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

// plan --fleet --cluster checks the fleet's policy files for that cluster:
// eu's own rule denies its ConfigMap, us does not have it.
func TestFleetClusterPolicies(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"khook.yaml":       "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: d}\nsteps:\n  - name: cm\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: c, namespace: default}\n",
		"policies/eu.yaml": "policies:\n  - name: no-configmaps-in-eu\n    deny: object.kind == \"ConfigMap\"\n    message: '\"no ConfigMap in eu\"'\n",
		"fleet.yaml":       "apiVersion: khook.io/v1\nkind: Fleet\nmetadata: {name: f}\nfiles: [khook.yaml]\nclusters:\n  - {name: eu, context: eu, policies: [policies/eu.yaml]}\n  - {name: us, context: us}\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	fleet := filepath.Join(dir, "fleet.yaml")
	for cluster, want := range map[string]int{"eu": 1, "us": 0} {
		ios, out, errOut := iostreams.Test("")
		code := Run(context.Background(), []string{"plan", "--offline", "--fleet", fleet, "--cluster", cluster}, ios)
		denied := strings.Contains(out.String(), "policy no-configmaps-in-eu denies ConfigMap default/c: no ConfigMap in eu")
		if code != want || denied != (cluster == "eu") {
			t.Errorf("plan --cluster %s: exit %d (want %d), denied %v:\n%s%s", cluster, code, want, denied, out, errOut)
		}
	}
}
