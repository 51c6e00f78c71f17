package helmfile

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trials 46zzd and 46zze (helmfiles of company, course and
// CI repositories, run once on dd3bb3d) showed, cut down.

// juriku: a postsync sh -c hook whose last command is an echo never fails,
// so helmfile carries on after a failed rollout; khook's rollout step
// fails the run, said at the hook.
func TestHookThatCarriesOnAfterAFailure(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: web\n    namespace: web\n    chart: oci://r.example/web\n    version: 1.0.0\n    hooks:\n      - events: [postsync]\n        command: sh\n        args:\n          - -c\n          - |\n            echo waiting\n            kubectl -n web rollout status deployment/web --timeout=300s\n            echo done\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{Env: lookupOf(map[string]string{})})
	if err != nil {
		t.Fatal(err)
	}
	if all := everything(res); !strings.Contains(all, "carries on after it fails (no set -e") || !strings.Contains(string(res.Spec), "status: deployment/web") {
		t.Errorf("%s", all)
	}
}

// A release's skipSchemaValidation (and helmDefaults') is the helm step's.
func TestSkipSchemaValidationCarried(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "helmDefaults:\n  skipSchemaValidation: true\nreleases:\n  - name: web\n    namespace: web\n    chart: oci://r.example/web\n    version: 1.0.0\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{Env: lookupOf(map[string]string{})})
	if err != nil {
		t.Fatal(err)
	}
	if spec := string(res.Spec); !strings.Contains(spec, "skipSchemaValidation: true") || strings.Contains(fmt.Sprint(res.Info, res.NotCarried), "skipSchemaValidation") {
		t.Errorf("%s\n%s", spec, everything(res))
	}
}

// 46zze N1: installed: false without a namespace is a delete step; the
// namespace warning says what that step does.
func TestNoNamespaceWarningOfADeleteStep(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: old\n    chart: oci://r.example/old\n    version: 1.0.0\n    installed: false\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{Env: lookupOf(map[string]string{})})
	if err != nil {
		t.Fatal(err)
	}
	if all := everything(res); !strings.Contains(all, `khook's delete step looks for the release in "default"`) || strings.Contains(all, "helm step uses") {
		t.Errorf("%s", all)
	}
}

// 46zzd D1: two keys of one map with the same literal credential: the
// warning of each names its own line, not the first line holding the text
// (user_password: on the line above password:).
func TestCredentialWarningNamesItsKeysLine(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: db\n    namespace: db\n    chart: oci://r.example/db\n    version: 1.0.0\n    values:\n      - auth:\n          user_password: Qz7wLm42Rt\n          password: Qz7wLm42Rt\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{Env: lookupOf(map[string]string{})})
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, r := range res.Releases {
		for _, n := range r.Info {
			lines[n.What] = n.Line
		}
	}
	for _, n := range res.Info {
		lines[n.What] = n.Line
	}
	if lines["release db values auth.user_password"] != 8 || lines["release db values auth.password"] != 9 {
		t.Errorf("lines %v\n%s", lines, everything(res))
	}
}
