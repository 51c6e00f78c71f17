package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/test/chartsrc"
)

// A chart read from a git repository at a branch (helm-git's URL, served
// by git's own HTTP server) installs; the state record keeps the commit
// as the chart's digest. When the branch moves between plan and apply,
// the saved plan is refused, naming both commits, and nothing is written;
// the drift plan says the ref moved.
func TestGitChartPinnedByCommit(t *testing.T) {
	r := newReviewed(t)
	g := chartsrc.NewGitRepo(t, chartsrc.Auth{}, "demo")
	r.spec = filepath.Join(r.dir, "khook.yaml")
	text := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: gitchart}\nstate: {namespace: %[1]s}\nsteps:\n- name: app\n  helm:\n    namespace: %[1]s\n    chart: demo\n    repo: %[2]s\n    version: 0.1.0\n", r.ns, g.RepoURL("main"))
	must(t, os.WriteFile(r.spec, []byte(text), 0o644))
	first := model.GitDigestPrefix + g.Head(t)

	if out := r.run("plan", "-f", r.spec, "--out", "first.plan"); out.Code != 0 {
		t.Fatalf("plan --out: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	out := r.run("apply", "-f", r.spec, "--plan", "first.plan", "-o", "json")
	expectSteps(t, out, []want{{Name: "app", Status: ok, Attempts: 1}})
	ctx := context.Background()
	cm, err := kc.Client.CoreV1().ConfigMaps(r.ns).Get(ctx, "app-demo", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "hello from demo" {
		t.Fatalf("configmap app-demo from the git chart: %v %v", err, cm.Data)
	}
	rec, err := state.NewStore(kc.Client, state.Ref{Namespace: r.ns, Name: "khook-state-gitchart"}).Load(ctx)
	must(t, err)
	if e := rec.Steps["app"]; e.ChartDigest != first || e.ChartVersion != "demo@0.1.0" {
		t.Fatalf("the state record keeps chart %q %q, want demo@0.1.0 %s", e.ChartVersion, e.ChartDigest, first)
	}

	// The branch moves on: the same chart version, another message.
	if out := r.run("plan", "-f", r.spec, "--out", "moved.plan"); out.Code != 0 {
		t.Fatalf("plan --out: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	values := filepath.Join(g.Dir, "charts", "demo", "values.yaml")
	b, err := os.ReadFile(values)
	must(t, err)
	must(t, os.WriteFile(values, []byte(strings.Replace(string(b), "hello from demo", "hello from the moved branch", 1)), 0o644))
	second := model.GitDigestPrefix + g.Commit(t, "another message")
	g.Push(t)
	out, writes := r.apply("moved.plan")
	says := "the chart's bytes differ from the plan's (planned " + first + ", now " + second + ")"
	if out.Code != 1 || out.Results == nil || out.Results.FailureReason != model.ReasonPlanChanged || !strings.Contains(out.Results.Error, says) {
		t.Fatalf("apply --plan after the branch moved: exit %d, results %+v; want exit 1, %s saying %q\nstderr:\n%s", out.Code, out.Results, model.ReasonPlanChanged, says, out.Stderr)
	}
	for _, w := range writes { // the state record notes the refused run; nothing else is written
		if !strings.Contains(w, "/khook-state-gitchart") && !strings.HasSuffix(w, "/leases") {
			t.Errorf("the refused apply wrote %s", w)
		}
	}

	live := khook(t, invocation{Args: []string{"plan", "-f", r.spec, "-o", "json"}, Kubeconfig: r.proxy.Kubeconfig})
	var p model.Plan
	if err := json.Unmarshal([]byte(live.Stdout), &p); err != nil || len(p.Steps) != 1 {
		t.Fatalf("plan: %v (exit %d)\nstderr:\n%s", err, live.Code, live.Stderr)
	}
	st := p.Steps[0]
	want := model.ChartMoved{Version: "demo@0.1.0", Applied: first, Served: second}
	if st.ChartMoved == nil || *st.ChartMoved != want || !strings.Contains(st.Reason, "the branch or tag moved") {
		t.Errorf("plan after the branch moved: %s %q chartMoved %+v, want %+v", st.Action, st.Reason, st.ChartMoved, want)
	}
}
