package report

import (
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

func sampleNodes() []GraphNode {
	return []GraphNode{
		{Name: "cilium", Type: "helm"},
		{Name: "remove-aws-node", Type: "delete"},
		{Name: "coredns-ready", Type: "wait", Needs: []string{"cilium", "remove-aws-node"}},
		{Name: "argocd", Type: "helm", Needs: []string{"coredns-ready"}, Skip: spec.SkipWhen},
		{Name: "end", Type: "job", Needs: []string{"argocd", "coredns-ready"}},
	}
}

func TestWriteMermaid(t *testing.T) {
	var w writeCounter
	if err := WriteMermaid(&w, sampleNodes()); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 {
		t.Errorf("WriteMermaid made %d writes, want 1", w.writes)
	}
	golden(t, "graph.mermaid", w.Bytes())
}

func TestWriteDOT(t *testing.T) {
	var w writeCounter
	if err := WriteDOT(&w, "demo", sampleNodes()); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 {
		t.Errorf("WriteDOT made %d writes, want 1", w.writes)
	}
	golden(t, "graph.dot", w.Bytes())
}

func TestGraphFromPlanKeepsExclusion(t *testing.T) {
	p := &model.Plan{Steps: []model.PlanStep{{Name: "a", Type: "helm"}, {Name: "b", Type: "job", Needs: []string{"a"}, Skip: spec.SkipWhen}}}
	nodes := GraphFromPlan(p)
	if len(nodes) != 2 || !nodes[1].Skip.Excluded() || nodes[1].Needs[0] != "a" {
		t.Errorf("GraphFromPlan = %+v", nodes)
	}
}
