package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// The summary of a run lists the declared inputs it used; a secret's value
// never reaches the report, not even in its JSON.
func TestInputsInSummary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "khook.yaml")
	os.WriteFile(file, []byte(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: demo}
vars:
  CLUSTER: {type: string, required: true}
  REPLICAS: {type: int, default: 2}
  TOKEN: {type: string, secret: true}
  NOTE: {type: string}
steps:
  - name: a
    job: {image: busybox, env: {T: "${TOKEN}", C: "${CLUSTER}-${REPLICAS}${NOTE}"}}
`), 0o644)
	s, err := spec.Load(spec.LoadOptions{Files: []string{file}, Set: []string{"CLUSTER=eu-1"},
		Environ: []string{"KHOOK_SECRET_TOKEN=hunter2-token"}, Redactor: redact.New()})
	if err != nil {
		t.Fatal(err)
	}
	r := &model.Results{Name: "demo", Command: "apply", Status: model.RunOK, Inputs: model.InputsOf(s),
		Steps: []model.StepResult{{Name: "a", Type: "job", Status: model.StatusOK, Attempts: 1}}}
	var b bytes.Buffer
	if err := WriteResultsMarkdown(&b, r, MarkdownOptions{NoDiagram: true}); err != nil {
		t.Fatal(err)
	}
	want := "<details><summary>Inputs (4)</summary>\n\n| Input | Value | Source |\n|---|---|---|\n" +
		"| CLUSTER | `eu-1` | --set |\n" +
		"| REPLICAS | `2` | default |\n" +
		"| TOKEN | *** (secret) | environment KHOOK_SECRET_TOKEN |\n" +
		"| NOTE | (empty) | unset |\n\n</details>\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant it to contain\n%s", b.String(), want)
	}
	var j bytes.Buffer
	WriteJSON(&j, r)
	if strings.Contains(b.String()+j.String(), "hunter2") || !strings.Contains(j.String(), `"value": "***"`) {
		t.Errorf("secret in the report:\n%s", j.String())
	}
}
