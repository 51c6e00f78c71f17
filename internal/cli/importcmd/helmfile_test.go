package importcmd

import (
	"os"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

func TestConvertHelmfile(t *testing.T) {
	data, err := os.ReadFile("../../../test/e2e/testdata/helmfile/helmfile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	conv, err := ConvertHelmfile(data, "platform")
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(conv.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, u := range conv.Unconverted {
		lines = append(lines, u.String())
	}
	t.Logf("spec:\n%s\nnot converted:\n%s", out, strings.Join(lines, "\n"))
	for _, want := range []string{
		"chart: oci://OCI_HOST/charts/demo",
		"repo: HTTP_REPO_URL",
		"timeout: 600s",
		"- delete:",
	} {
		if !strings.Contains(string(out), want) && !strings.Contains(string(out), strings.TrimPrefix(want, "- ")) {
			t.Errorf("spec lacks %q", want)
		}
	}
	if len(conv.Unconverted) != 7 {
		t.Errorf("%d constructs not converted, want 7", len(conv.Unconverted))
	}
}

func TestConvertHelmfileTemplated(t *testing.T) {
	conv, err := ConvertHelmfile([]byte("releases:\n  - name: web\n    chart: ./web\n    version: {{ .Values.v }}\n"), "x")
	if err != nil || len(conv.Unconverted) != 1 || conv.Unconverted[0].Line != 4 || !strings.Contains(conv.Unconverted[0].Why, "helmfile build") {
		t.Errorf("a templated line: %+v, %v; want it reported at line 4", conv, err)
	}
	if _, err := ConvertHelmfile([]byte("releases: [\n"), "x"); err == nil || !strings.Contains(err.Error(), "cannot read it as YAML") {
		t.Errorf("broken YAML: %v", err)
	}
}
