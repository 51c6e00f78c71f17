package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/cluster"
)

// chartSpec writes a one-step helm spec (helm is the step's helm: block,
// indented four spaces) and returns its path.
func chartSpec(t *testing.T, ns, helm string) string {
	t.Helper()
	text := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: charts}\nsteps:\n- name: app\n  helm:\n    namespace: %s\n%s", ns, helm)
	path := filepath.Join(t.TempDir(), "khook.yaml")
	must(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func planJSON(t *testing.T, env []string, file string) model.Plan {
	t.Helper()
	out := khook(t, invocation{Args: []string{"plan", "-f", file, "-o", "json", "--diff"}, Env: env})
	var p model.Plan
	if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil || len(p.Steps) != 1 {
		t.Fatalf("plan: %v (exit %d)\nstdout:\n%s\nstderr:\n%s", err, out.Code, out.Stdout, out.Stderr)
	}
	return p
}

// An unvendored chart with a Chart.lock: one dependency from the HTTP
// repository, one from the OCI registry. It installs; the converged re-run
// (a new process, the same user cache) sends no request to either server; a
// wrong lock digest is refused.
func TestChartDependenciesFromLock(t *testing.T) {
	ns := namespace(t)
	env := []string{"XDG_CACHE_HOME=" + t.TempDir()}
	repo := chartsrc.NewHTTPRepo(t, chartsrc.Auth{}, "demo")
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{})
	reg.Push(t, "caps")
	dir := t.TempDir()
	deps := []*chartv2.Dependency{{Name: "demo", Version: "~0.1.0", Repository: repo.URL}, {Name: "caps", Version: "0.1.0", Repository: reg.URL()}}
	locked := []*chartv2.Dependency{{Name: "demo", Version: chartsrc.Version, Repository: repo.URL}, {Name: "caps", Version: chartsrc.Version, Repository: reg.URL()}}
	writeYAML(t, filepath.Join(dir, "Chart.yaml"), map[string]any{"apiVersion": "v2", "name": "umbrella", "version": "1.0.0", "dependencies": deps})
	// The digest helm dependency update wrote for these dependencies.
	writeYAML(t, filepath.Join(dir, "Chart.lock"), map[string]any{"dependencies": locked, "digest": helmLockDigest(t, deps, locked), "generated": "2026-01-01T00:00:00Z"})
	file := chartSpec(t, ns, "    chart: "+dir+"\n    values: {demo: {replicaCount: 1}}\n")

	p := planJSON(t, env, file)
	if !strings.Contains(p.Steps[0].Reason+p.Steps[0].Summary, "builds chart dependencies demo 0.1.0 from "+repo.URL+" (download), caps 0.1.0 from "+reg.URL()+" (download)") {
		t.Errorf("plan reason = %q", p.Steps[0].Reason)
	}
	out := khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}, Env: env})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})

	httpBefore, ociBefore := repo.Requests(), reg.Requests()
	out = khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}, Env: env})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	if !strings.Contains(out.Results.Steps[0].Detail, "unchanged") {
		t.Errorf("re-run detail = %q", out.Results.Steps[0].Detail)
	}
	t.Logf("converged re-run: %d requests to the HTTP repository, %d to the OCI registry", repo.Requests()-httpBefore, reg.Requests()-ociBefore)
	if n, m := repo.Requests()-httpBefore, reg.Requests()-ociBefore; n != 0 || m != 0 {
		t.Errorf("the converged re-run sent %d requests to the HTTP repository and %d to the OCI registry, want none", n, m)
	}

	writeYAML(t, filepath.Join(dir, "Chart.lock"), map[string]any{"dependencies": locked, "digest": "sha256:" + strings.Repeat("0", 64), "generated": "2026-01-01T00:00:00Z"})
	out = khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}, Env: env})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: "Chart.lock does not match the dependencies in Chart.yaml"}})
}

// A post-renderer's patch is in the plan's diff, applied, and an
// out-of-band edit of the patched field is drift.
func TestChartPostRenderer(t *testing.T) {
	ns := namespace(t)
	file := chartSpec(t, ns, "    chart: "+chartsrc.ChartDir("demo")+`
    postRenderers:
    - kustomize:
        patches:
        - target: {kind: Deployment, name: app-demo}
          patch: |
            - op: replace
              path: /spec/replicas
              value: 5
`)
	p := planJSON(t, nil, file)
	if !strings.Contains(p.Steps[0].Diff, "replicas: 5") {
		t.Errorf("the plan's diff has no patched replicas:\n%s", p.Steps[0].Diff)
	}
	// The plan line says the action it plans: install, no change, upgrade.
	planLine := func(action model.Action, verb string) {
		t.Helper()
		if p.Steps[0].Action == action && !strings.HasPrefix(p.Steps[0].Summary, verb+" chart ") {
			t.Errorf("plan %s: line %q, want it to start %q", action, p.Steps[0].Summary, verb+" chart")
		}
	}
	planLine(model.ActionInstall, "install")
	out := khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	ctx := t.Context()
	dep, err := kc.Client.AppsV1().Deployments(ns).Get(ctx, "app-demo", metav1.GetOptions{})
	must(t, err)
	if *dep.Spec.Replicas != 5 {
		t.Errorf("live replicas = %d, want 5", *dep.Spec.Replicas)
	}
	if p = planJSON(t, nil, file); p.Steps[0].Action != model.ActionUnchanged {
		t.Errorf("converged plan: %s (%s)", p.Steps[0].Action, p.Steps[0].Reason)
	}
	planLine(model.ActionUnchanged, "no change to")
	_, err = kc.Client.AppsV1().Deployments(ns).Patch(ctx, "app-demo", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	must(t, err)
	p = planJSON(t, nil, file)
	if p.Steps[0].Action != model.ActionUpgrade || !strings.Contains(p.Steps[0].Reason, "drifted") {
		t.Errorf("after the edit: %s (%s), want drift", p.Steps[0].Action, p.Steps[0].Reason)
	}
	planLine(model.ActionUpgrade, "upgrade")
}

// A passing chart test, and a failing one with its pod's log tail.
func TestChartTests(t *testing.T) {
	ns := namespace(t)
	file := chartSpec(t, ns, "    chart: "+chartsrc.ChartDir("tested")+"\n    test: true\n")
	p := planJSON(t, nil, file)
	if !strings.Contains(p.Steps[0].Reason, "then runs test app-test-ok") {
		t.Errorf("plan reason = %q", p.Steps[0].Reason)
	}
	out := khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	if d := out.Results.Steps[0].Detail; !strings.Contains(d, "test app-test-ok passed") {
		t.Errorf("detail = %q", d)
	}

	file = chartSpec(t, ns, "    chart: "+chartsrc.ChartDir("tested")+"\n    values: {failTest: true}\n    test: {timeout: 1m}\n")
	out = khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: "test app-test-fail failed; log tail: " + strings.Join(cluster.PodLogLines, " | ")}})
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := yaml.Marshal(v)
	must(t, err)
	must(t, os.WriteFile(path, b, 0o644))
}

// helmLockDigest is the digest helm dependency update writes to Chart.lock
// (Helm's resolver.HashReq: sha256 of the JSON pair of Chart.yaml's
// dependencies and the lock's).
func helmLockDigest(t *testing.T, req, lock []*chartv2.Dependency) string {
	t.Helper()
	data, err := json.Marshal([2][]*chartv2.Dependency{req, lock})
	must(t, err)
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}

// A chart whose values.schema.json refers to a URL no longer served: the
// plan and apply fail as helm does, saying so; skipSchemaValidation: true
// (helm --skip-schema-validation) installs it, planned the same way.
func TestSkipSchemaValidation(t *testing.T) {
	ns := namespace(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(dead.Close)
	dir := t.TempDir()
	writeYAML(t, filepath.Join(dir, "Chart.yaml"), map[string]any{"apiVersion": "v2", "name": "schemaref", "version": "1.0.0"})
	must(t, os.MkdirAll(filepath.Join(dir, "templates"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "templates", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: schemaref}\ndata: {size: {{ .Values.size | quote }}}\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "values.yaml"), []byte("size: small\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "values.schema.json"), []byte(`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"size": {"$ref": "`+dead.URL+`/definitions.json#/size"}}}`), 0o644))

	file := chartSpec(t, ns, "    chart: "+dir+"\n")
	if p := planJSON(t, nil, file); p.Steps[0].Action != model.ActionFail || !strings.Contains(p.Steps[0].Reason, "404") || !strings.Contains(p.Steps[0].Reason, "set skipSchemaValidation: true") {
		t.Errorf("plan without skipSchemaValidation: %s %q", p.Steps[0].Action, p.Steps[0].Reason)
	}
	file = chartSpec(t, ns, "    chart: "+dir+"\n    skipSchemaValidation: true\n")
	if p := planJSON(t, nil, file); p.Steps[0].Action != model.ActionInstall {
		t.Errorf("plan with skipSchemaValidation: %s %q", p.Steps[0].Action, p.Steps[0].Reason)
	}
	out := khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
}
