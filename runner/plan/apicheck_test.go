package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/spec"
)

// CheckAPIs reads every kind of source offline — an inline block (at its
// line in the spec), a kustomization (at the step's kustomize: line), a
// local chart (at its rendered template's line) — validates a custom
// resource against a CRD another step applies, and leaves url: sources
// and repository charts alone, and the objects of a crds: only step's
// chart other than its CRDs (it applies none of them).
func TestCheckAPIsEverySource(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("khook.yaml", `apiVersion: khook.io/v1
kind: Khook
metadata: {name: offline}
steps:
  - name: crds
    apply:
      manifests:
        - inline: |
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata: {name: widgets.example.com}
            spec:
              group: example.com
              names: {kind: Widget, plural: widgets}
              scope: Namespaced
              versions:
                - name: v1
                  served: true
                  storage: true
                  schema:
                    openAPIV3Schema:
                      type: object
                      properties:
                        spec:
                          type: object
                          properties:
                            size: {type: integer}
  - name: widgets
    needs: [crds]
    apply:
      namespace: apps
      manifests:
        - inline: |
            apiVersion: example.com/v1
            kind: Widget
            metadata: {name: w}
            spec:
              size: large
        - url: https://example.invalid/never-fetched.yaml
        - kustomize: ./base
  - name: app
    helm:
      chart: ./chart
      namespace: apps
      values: {replicas: three}
  - name: remote
    helm:
      chart: podinfo
      repo: https://example.invalid/charts
      version: 6.0.0
  - name: app-crds
    helm:
      chart: ./chart
      namespace: apps
      crds: only
      values: {replicas: three}
`)
	write("base/kustomization.yaml", "resources: [svc.yaml]\n")
	write("base/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}]\n  typo: true\n")
	write("chart/Chart.yaml", "apiVersion: v2\nname: app\nversion: 0.1.0\n")
	write("chart/templates/deploy.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers: [{name: x, image: nginx}]
`)
	s, err := spec.Load(spec.LoadOptions{Files: []string{filepath.Join(dir, "khook.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := apischema.ParseKubeVersion(apischema.DefaultKubeVersion)
	problems, warnings := CheckAPIs(context.Background(), s, v)
	var got []string
	for _, p := range problems {
		got = append(got, strings.TrimPrefix(p.Pos.String(), dir+string(filepath.Separator))+" "+p.Message)
	}
	want := []string{
		`khook.yaml:38:15 widget.example.com/w: spec.size must be an integer, not a string`,
		`khook.yaml:40:11 service/s: unknown field "spec.typo"`, // the step's kustomize: line
		`app/templates/deploy.yaml (rendered):7:3 deployment.apps/app: spec.replicas must be an integer, not a string`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
}
