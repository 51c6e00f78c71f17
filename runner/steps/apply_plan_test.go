package steps

import (
	"context"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

func planActions(t *testing.T, p *ApplyPlan) string {
	t.Helper()
	var parts []string
	for _, o := range p.Objects {
		s := o.Action
		if o.Reason != "" {
			s += " (" + o.Reason + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func TestApplyPlanPredictsWithoutWriting(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	x := NewApply(env)
	ctx := context.Background()
	st := applyStep(ns, configMap("a", "1"), deployment("web", 1, nil))

	p, err := x.Plan(ctx, st.Apply, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := planActions(t, p); got != "create, create" || p.Objects[0].Result == nil || p.Objects[0].Live != nil {
		t.Errorf("fresh: %s, %+v", got, p.Objects[0])
	}
	if out := run(t, x, st); out.Detail != "created 2 objects" {
		t.Errorf("the plan's dry-run wrote something: %q", out.Detail)
	}
	if p, _ := x.Plan(ctx, st.Apply, false); planActions(t, p) != "unchanged, unchanged" {
		t.Errorf("converged: %s", planActions(t, p))
	}
	st.Apply.Manifests[0].Inline = configMap("a", "2") + "\n---\n" + deployment("web", 1, nil)
	p, _ = x.Plan(ctx, st.Apply, true)
	if got := planActions(t, p); got != "configure, unchanged" {
		t.Errorf("changed: %s", got)
	}
	if v := p.Objects[0].Result.Object["data"].(map[string]any)["key"]; v != "2" {
		t.Errorf("dry-run result data.key = %v", v)
	}
	if v := p.Objects[0].Live.Object["data"].(map[string]any)["key"]; v != "1" {
		t.Errorf("live data.key = %v (the dry-run must not persist)", v)
	}

	ssa := *st.Apply
	ssa.ServerSide = true
	ssa.Manifests = []spec.Source{{Inline: configMap("s", "1")}}
	run(t, x, &spec.Step{Name: "ssa", Apply: &ssa})
	if p, _ := x.Plan(ctx, &ssa, false); planActions(t, p) != "unchanged" {
		t.Errorf("server-side converged: %s", planActions(t, p))
	}

	skip := *st.Apply
	skip.SkipIf = "exists"
	if p, _ := x.Plan(ctx, &skip, false); !p.Skip {
		t.Errorf("skipIf exists: %+v", p)
	}
}

func TestApplyPlanUnknowns(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	x := NewApply(env)
	g := groupFor(ns)
	a := applyStep(ns, crd(g), widget(g, "w", "s")).Apply
	p, err := x.Plan(context.Background(), a, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "create, unknown (the server does not know kind Widget." + g + " yet (an earlier step or manifest may install its CRD))"
	if got := planActions(t, p); got != want {
		t.Errorf("CRD and CR:\n got %s\nwant %s", got, want)
	}
	missing := ns + "-later"
	a = applyStep(missing, configMap("a", "1")).Apply
	p, _ = x.Plan(context.Background(), a, true)
	if got := planActions(t, p); got != "unknown (namespace "+missing+" does not exist yet (an earlier step may create it))" {
		t.Errorf("missing namespace: %s", got)
	}
	a.CreateNamespace = true
	if p, _ := x.Plan(context.Background(), a, true); planActions(t, p) != "create" {
		t.Errorf("createNamespace: %s", planActions(t, p))
	}
}
