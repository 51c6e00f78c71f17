package helmfile

import (
	"strings"
	"testing"
)

// What held-out trial 46zg (helmfiles of personal repositories, run once
// on ff49685) showed, cut down.

// D1 (ownsuite): a literal namespace equal to an unrelated variable's
// default stays the literal; where the variable does land, it is ${NAME}.
func TestValueEqualToAVariableByChanceStaysLiteral(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl":    "environments:\n  default:\n    values:\n      - env/default.yaml.gotmpl\n---\nreleases:\n  - name: demo\n    namespace: {{ .Values.workloadsNamespace }}\n    chart: oci://r.example/demo\n    version: 1.0.0\n    values:\n      - org: {{ .Values.grist.org }}\n        team: suite\n",
		"env/default.yaml.gotmpl": "workloadsNamespace: suite\ngrist:\n  org: {{ env \"SUITE_GRIST_ORG\" | default \"suite\" | quote }}\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{})})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	for _, want := range []string{"namespace: suite\n", "org: ${SUITE_GRIST_ORG}\n", "team: suite\n", "SUITE_GRIST_ORG: {type: string, default: \"suite\""} {
		if !strings.Contains(spec, want) {
			t.Errorf("want %q in\n%s", want, spec)
		}
	}
}

// N6 (NotIlya4's monitoring values): a values template that reads files of
// the repository (dashboards) is rendered once, and says so: an edit of
// those files reaches helmfile, not the spec.
func TestValuesTemplateReadingFilesSaysRenderedOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml":              "releases:\n  - name: grafana\n    namespace: mon\n    chart: oci://r.example/grafana\n    version: 1.0.0\n    values:\n      - values/grafana.yaml.gotmpl\n",
		"values/grafana.yaml.gotmpl": "dashboards:\n  main: |\n{{ readFile \"dash.json\" | indent 4 }}\n",
		"values/dash.json":           "{\"title\": \"main\"}\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{Env: lookupOf(map[string]string{})})
	if err != nil {
		t.Fatal(err)
	}
	if all := everything(res); !strings.Contains(all, "rendered once into ./grafana.values-1.yaml with the text of values/dash.json as it is at import") {
		t.Errorf("no rendered-once note:\n%s", all)
	}
}

// N1 (ownsuite): a release skipped on a condition its environment reads
// from an environment variable says it was decided with this checkout's.
func TestSkippedOnEnvironmentConditionSaysSo(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "environments:\n  default:\n    values:\n      - env.yaml.gotmpl\n---\nreleases:\n  - name: docs\n    namespace: apps\n    chart: oci://r.example/docs\n    version: 1.0.0\n    condition: apps.docs.enabled\n  - name: web\n    namespace: apps\n    chart: oci://r.example/web\n    version: 1.0.0\n",
		"env.yaml.gotmpl":      "apps:\n  docs:\n    enabled: {{ env \"APP_DOCS\" | default \"false\" }}\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{})})
	if err != nil {
		t.Fatal(err)
	}
	if all := everything(res); !strings.Contains(all, "is false in environment default, rendered with this checkout's environment variables") {
		t.Errorf("no word of the environment:\n%s", all)
	}
}
