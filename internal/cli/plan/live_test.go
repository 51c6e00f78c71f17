package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/test/cluster"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &testCluster)) }

// writes counts the requests that change the cluster (dry runs excluded).
type writes struct{ n atomic.Int64 }

func (w *writes) clients(t *testing.T) *kube.Clients {
	t.Helper()
	cfg := rest.CopyConfig(testCluster.RESTConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return rtFunc(func(req *http.Request) (*http.Response, error) {
			if helmstep.IsWrite(req) {
				w.n.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	c, err := kube.NewClientsForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// planRun runs `khook plan -o json --detailed-exitcode [--diff]` on clients.
func planRun(t *testing.T, ctx context.Context, c *kube.Clients, diff bool, files []string, set ...string) (*model.Plan, int) {
	t.Helper()
	ios, out, errOut := iostreams.Test("")
	f := cmdutil.NewFactory(ios)
	opts := &Options{F: f, Output: cmdutil.OutputJSON, Diff: diff, DetailedExitCode: true,
		Spec:    cmdutil.SpecFlags{Files: files, Set: set, VarPrefix: cmdutil.DefaultVarPrefix, SecretPrefix: cmdutil.DefaultSecretPrefix},
		Clients: c,
	}
	err := errorsExitOne(Run(ctx, opts))
	code := cmdutil.CodeOf(err)
	if code == command.ExitFailure {
		t.Fatalf("plan failed: %v\nstderr: %s", err, errOut)
	}
	var p model.Plan
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatalf("plan output is not JSON: %v\n%s", err, out)
	}
	return &p, code
}

// applyRun applies the spec with the real executors (apply's backend).
func applyRun(t *testing.T, ctx context.Context, c *kube.Clients, files []string, set ...string) {
	t.Helper()
	ios, _, _ := iostreams.Test("")
	f := cmdutil.NewFactory(ios)
	s, err := f.LoadSpec(&cmdutil.SpecFlags{Files: files, Set: set, VarPrefix: cmdutil.DefaultVarPrefix, SecretPrefix: cmdutil.DefaultSecretPrefix})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&command.ApplyCommand{Config: f.ActionConfig(c)}).Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Steps {
		if r.Status == model.StatusFailed {
			t.Fatalf("apply: step %s failed: %s", r.Name, r.Error)
		}
	}
	if res.Error != "" {
		t.Fatal(res.Error)
	}
}

func actions(p *model.Plan) string {
	var parts []string
	for _, s := range p.Steps {
		parts = append(parts, s.Name+"="+string(s.Action))
	}
	return strings.Join(parts, " ")
}

func step(p *model.Plan, name string) model.PlanStep {
	for _, s := range p.Steps {
		if s.Name == name {
			return s
		}
	}
	return model.PlanStep{}
}

func TestLivePlanOfTheQuickstart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var w writes
	c := w.clients(t)
	quickstart := []string{filepath.Join("..", "..", "..", "examples", "quickstart.yaml")}

	// Fresh cluster: install / create / run; the widget's kind is not served yet.
	p, code := planRun(t, ctx, c, true, quickstart)
	want := "demo=install widget-crd=create widget=unknown demo-available=wait hello=run"
	if got := actions(p); got != want || code != command.ExitChanges || !p.Changes {
		t.Fatalf("fresh plan: %s (exit %d)\nwant %s (exit 2)", got, code, want)
	}
	if r := step(p, "widget").Reason; !strings.Contains(r, "step widget-crd registers it") {
		t.Errorf("widget's unknown reason = %q, want it to name widget-crd", r)
	}
	if d := step(p, "demo").Diff; !strings.Contains(d, "+kind: Deployment") || !strings.Contains(d, "GREETING: hello") {
		t.Errorf("install diff lacks the rendered objects:\n%s", d)
	}
	if n := w.n.Load(); n != 0 {
		t.Fatalf("plan --diff sent %d writes, want none", n)
	}

	applyRun(t, ctx, c, quickstart)

	// Converged: nothing changes (the job would run again, which is no change).
	w.n.Store(0)
	p, code = planRun(t, ctx, c, true, quickstart)
	want = "demo=unchanged widget-crd=unchanged widget=skip demo-available=no-op hello=run"
	if got := actions(p); got != want || code != 0 || p.Changes {
		t.Fatalf("converged plan: %s (exit %d)\nwant %s (exit 0)\n%s", got, code, want, dump(p))
	}
	for _, s := range p.Steps {
		if s.Diff != "" || s.DiffNote != "no changes" {
			t.Errorf("step %s: diff %q note %q, want no changes", s.Name, s.Diff, s.DiffNote)
		}
	}

	// Plain plan: the same prediction, no diffs, no writes either.
	p, code = planRun(t, ctx, c, false, quickstart)
	if got := actions(p); got != want || code != 0 || step(p, "demo").DiffNote != "" {
		t.Fatalf("converged plan without --diff: %s (exit %d)", got, code)
	}
	if n := w.n.Load(); n != 0 {
		t.Fatalf("plan and plan --diff sent %d writes, want none", n)
	}

	// One value changes: exactly that step shows a diff.
	p, code = planRun(t, ctx, c, true, quickstart, "GREETING=bonjour")
	if got := actions(p); !strings.HasPrefix(got, "demo=upgrade widget-crd=unchanged") || code != command.ExitChanges {
		t.Fatalf("plan after a value change: %s (exit %d)", got, code)
	}
	for _, s := range p.Steps {
		if (s.Diff != "") != (s.Name == "demo") {
			t.Errorf("step %s: diff %q, want a diff on demo only", s.Name, s.Diff)
		}
	}
	if d := step(p, "demo").Diff; !strings.Contains(d, "-  GREETING: hello") || !strings.Contains(d, "+  GREETING: bonjour") {
		t.Errorf("demo's diff does not show the value change:\n%s", d)
	}

	// Out-of-band edit of the release's ConfigMap: drift.
	_, err := testCluster.Client.CoreV1().ConfigMaps("demo").Patch(ctx, "demo", types.MergePatchType,
		[]byte(`{"data":{"GREETING":"edited"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.n.Store(0)
	p, code = planRun(t, ctx, c, true, quickstart)
	if d := step(p, "demo"); d.Action != "upgrade" || !strings.Contains(d.Diff, "-  GREETING: edited") || code != command.ExitChanges {
		t.Fatalf("drifted ConfigMap: %s %q (exit %d)\n%s", d.Action, d.Reason, code, d.Diff)
	}
	if n := w.n.Load(); n != 0 {
		t.Fatalf("plan --diff sent %d writes, want none", n)
	}
}

func TestLivePlanShowsAnAppliedDeploymentEditedOutOfBand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := testCluster.Namespace(t)
	var w writes
	c := w.clients(t)
	file := filepath.Join(t.TempDir(), "khook.yaml")
	doc := fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata:
  name: drift
steps:
  - name: web
    apply:
      namespace: %[1]s
      manifests:
        - inline: |
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: web
            spec:
              replicas: 1
              selector:
                matchLabels: {app: web}
              template:
                metadata:
                  labels: {app: web}
                spec:
                  containers:
                    - name: pause
                      image: registry.k8s.io/pause:3.10
        - inline: |
            apiVersion: v1
            kind: Secret
            metadata:
              name: creds
            stringData:
              password: ${PASSWORD:-first-password}
  - name: ssa
    apply:
      namespace: %[1]s
      serverSide: true
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: ssa
            data:
              size: ${SIZE:-small}
`, ns)
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{file}
	applyRun(t, ctx, c, files)
	w.n.Store(0)
	if p, code := planRun(t, ctx, c, true, files); code != 0 || actions(p) != "web=unchanged ssa=unchanged" {
		t.Fatalf("converged: %s (exit %d)\n%s", actions(p), code, dump(p))
	}

	// kubectl edit: scale the Deployment by hand.
	_, err := testCluster.Client.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, code := planRun(t, ctx, c, true, files, "PASSWORD=second-password")
	web := step(p, "web")
	if web.Action != "configure" || code != command.ExitChanges || !strings.Contains(web.Diff, "-  replicas: 3") || !strings.Contains(web.Diff, "+  replicas: 1") {
		t.Fatalf("edited Deployment: %s (exit %d)\n%s", web.Action, code, web.Diff)
	}
	if ssa := step(p, "ssa"); ssa.Action != "unchanged" || ssa.DiffNote != "no changes" {
		t.Errorf("untouched server-side apply step: %s %q", ssa.Action, ssa.Diff)
	}
	p, _ = planRun(t, ctx, c, true, files, "SIZE=large")
	if ssa := step(p, "ssa"); ssa.Action != "configure" || !strings.Contains(ssa.Diff, "+  size: large") {
		t.Errorf("server-side apply step after a change: %s\n%s", ssa.Action, ssa.Diff)
	}
	// The Secret's change shows, its values do not.
	if strings.Contains(web.Diff, "password") && (strings.Contains(web.Diff, "first-password") || strings.Contains(web.Diff, "second-password") ||
		!strings.Contains(web.Diff, "***")) {
		t.Errorf("the Secret's values leak into the diff:\n%s", web.Diff)
	}
	if n := w.n.Load(); n != 0 {
		t.Fatalf("plan --diff sent %d writes, want none", n)
	}
}

func dump(p *model.Plan) string {
	var b bytes.Buffer
	_ = report.WritePlanText(&b, p)
	return b.String()
}
