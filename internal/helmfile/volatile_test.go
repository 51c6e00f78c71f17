package helmfile

import (
	"strings"
	"testing"
)

// A clock or random function renders anew on every helmfile run; the
// import renders once, and says so at the call's line. Cut down from
// MinBZK/mijn-bureau-infra (helmfile/apps/docs/values.yaml.gotmpl:1, a job
// suffix new on every install) and kube-zen/zen-watcher
// (scripts/helmfile.yaml.gotmpl:16, a Grafana password generated when
// GRAFANA_PASSWORD is unset).
func TestImportVolatileFunctions(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": `{{ $grafanaPassword := env "GRAFANA_PASSWORD" | default (randAlphaNum 16) }}
releases:
  - name: docs
    namespace: docs
    chart: oci://r.example/docs
    version: 1.0.0
    values:
      - values.yaml.gotmpl
  - name: grafana
    namespace: grafana
    chart: oci://r.example/grafana
    version: 1.0.0
    values:
      - adminPassword: {{ $grafanaPassword | quote }}
        podLabels:
          run: {{ randAlphaNum 8 | lower | quote }}
        db:
          password: {{ env "DB_PASSWORD" | quote }}
`,
		"values.yaml.gotmpl": `{{- $releaseId := now | unixEpoch }}
backend:
  jobs:
    releaseSuffix: {{ $releaseId | quote }}
`,
	})
	env := map[string]string{"DB_PASSWORD": "c4nary-db-password"}
	opts := Options{Env: func(n string) (string, bool) { v, ok := env[n]; return v, ok }}
	res, err := Import(dir, "helmfile.yaml.gotmpl", opts)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, n := range res.NotCarried {
		notes = append(notes, n.String())
	}
	for _, r := range res.Releases {
		for _, n := range r.NotCarried {
			notes = append(notes, n.String())
		}
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{
		"release docs: values values.yaml.gotmpl:1 `now`: helmfile reads the clock on every run",
		"helmfile.yaml.gotmpl:1: `randAlphaNum`: helmfile makes a new random value on every run",
		"helmfile.yaml.gotmpl:16: `randAlphaNum`: helmfile makes a new random value on every run",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no note %q in:\n%s", want, all)
		}
	}
	spec := string(res.Spec)
	// The second rendering (what derives from DB_PASSWORD) sees the same
	// random values: the pod label is not taken for a derived secret.
	if strings.Contains(spec, "DERIVED_") || !strings.Contains(spec, "password: ${DB_PASSWORD}") {
		t.Errorf("the random label is taken for a value derived from the secret:\n%s", spec)
	}

	// GRAFANA_PASSWORD set: randAlphaNum is called for nothing, no note.
	env["GRAFANA_PASSWORD"] = "c4nary-grafana"
	res, err = Import(dir, "helmfile.yaml.gotmpl", opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.NotCarried {
		if n.Loc.Line == 1 && strings.Contains(n.What, "randAlphaNum") {
			t.Errorf("a random value that is not used is said: %s", n)
		}
	}
	if strings.Contains(string(res.Spec), "c4nary-grafana") {
		t.Errorf("the password is written:\n%s", res.Spec)
	}
}
