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
		"helmfile.yaml.gotmpl": "environments:\n  default:\n    values:\n      - env/default.yaml.gotmpl\n---\nreleases:\n  - name: demo\n    namespace: {{ .Values.workloadsNamespace }}\n    chart: oci://r.example/demo\n    version: 1.0.0\n    values:\n      - org: {{ .Values.grist.org }}\n        team: suite\n",
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
