package destroy

import (
	"context"
	"fmt"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/spec"
)

func TestTeardownOrderIsReversed(t *testing.T) {
	s := &spec.Spec{Steps: []*spec.Step{
		{Name: "crds", Apply: &spec.Apply{}},
		{Name: "operator", Needs: []string{"crds"}, Helm: &spec.Helm{Chart: "x", Namespace: "ops"}},
		{Name: "cr", Needs: []string{"crds", "operator"}, Apply: &spec.Apply{}},
		{Name: "check", Needs: []string{"cr"}, Wait: &spec.Wait{For: "delete", On: "pods"}},
		{Name: "operator-crds", Helm: &spec.Helm{Chart: "x", CRDs: spec.CRDsOnly}},
	}}
	var order []string
	exec := runner.ExecutorFunc(func(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
		order = append(order, st.Name)
		if st.Name == "operator" && (st.Delete == nil || st.Delete.Release != "operator" || st.Delete.Namespace != "ops") {
			t.Errorf("operator teardown = %+v, want an uninstall of release operator in ops", st.Delete)
		}
		return runner.Outcome{}, nil
	})
	res := Run(context.Background(), s, Options{Delete: exec, Parallelism: 1})
	if fmt.Sprint(order) != "[cr operator crds]" {
		t.Errorf("teardown order %v, want [cr operator crds]", order)
	}
	if res[3].Status != model.StatusSkipped || res[3].Type != spec.TypeWait {
		t.Errorf("wait step = %+v, want skipped and typed wait", res[3])
	}
	if r := res[4]; r.Status != model.StatusSkipped || r.Type != spec.TypeHelm || r.SkipReason == "" || fmt.Sprint(order) != "[cr operator crds]" {
		t.Errorf("crds: only step = %+v (teardown order %v), want skipped, typed helm, no uninstall", r, order)
	}
}
