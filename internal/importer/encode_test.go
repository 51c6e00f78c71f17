package importer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

// A multi-line string that begins with white space or holds a tab, in a
// list (sh -c "⏎psql …", an inline manifest's leading blank line, a
// values list), is written so that it reads back the same; the model is
// left as it was (46zp's D1: the import ended with "cannot encode step").
func TestWriteAwkwardStrings(t *testing.T) {
	script := "\n  psql -c 'select 1'\n\techo done\n"
	m := &Model{Name: "x", Steps: []*Step{
		{Out: &OutStep{Name: "boot", Job: &OutJob{Image: "postgres:16", Args: []string{"bash", "-lc", script}}}},
		{Out: &OutStep{Name: "app", Apply: &OutApply{Manifests: []OutSource{{Inline: "\nkind: ConfigMap\n"}}}}},
		{Out: &OutStep{Name: "chart", Helm: &OutHelm{Chart: "./c", Values: map[string]any{"hooks": []any{"  a\nb\n"}, "s": " x\ny"}}}},
	}}
	doc, err := Write(m)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Steps []map[string]any `yaml:"steps"`
	}
	if err := yaml.Unmarshal(doc, &back); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	got := []any{back.Steps[0]["job"].(map[string]any)["args"].([]any)[2], back.Steps[1]["apply"].(map[string]any)["manifests"].([]any)[0].(map[string]any)["inline"],
		back.Steps[2]["helm"].(map[string]any)["values"].(map[string]any)["hooks"].([]any)[0], back.Steps[2]["helm"].(map[string]any)["values"].(map[string]any)["s"]}
	if d := cmp.Diff([]any{script, "\nkind: ConfigMap\n", "  a\nb\n", " x\ny"}, got); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}
	if m.Steps[0].Out.Job.Args[2] != script || m.Steps[2].Out.Helm.Values["s"] != " x\ny" {
		t.Errorf("the model was changed: %q", m.Steps[0].Out.Job.Args)
	}
}
