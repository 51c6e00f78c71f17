package helmstep

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// Plan and apply replace the same objects, found by the one replace
// detection (replaceOf, upgradeDrift), whether the step's onImmutable or
// the objects' own annotation asks for it: of testdata/charts/replace's
// upgrade the plan names the Job and the Deployment replace and the
// ConfigMap configure, apply replaces exactly those (new UIDs) and
// configures the ConfigMap in place, and the next plan is unchanged.
func TestPlanAndApplyReplaceTheSameObjects(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, onImmutable string
		annotated         bool
	}{
		{"rep-step", spec.OnImmutableRecreate, false},
		{"rep-annotation", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step := func(tag, app string) *spec.Step {
				st := f.step(tc.name, spec.Helm{Chart: "./charts/replace", Values: map[string]any{"tag": tag, "app": app, "recreate": tc.annotated}})
				st.OnImmutable = tc.onImmutable
				return st
			}
			f.run(step("1", "a"), stepTimeout)
			before := f.uids(t, tc.name)

			ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
			defer cancel()
			p, err := f.exec.Plan(kube.WithLiveCache(ctx), step("2", "b"), runner.PlanInput{})
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			var planned, configured []string
			for _, o := range p.Objects {
				switch o.Action {
				case model.ActionReplace:
					planned = append(planned, o.Kind+" "+o.Name)
				case model.ActionConfigure:
					configured = append(configured, o.Kind+" "+o.Name)
				}
			}
			want := []string{"Deployment " + tc.name + "-web", "Job " + tc.name + "-migrate"}
			slices.Sort(planned)
			if p.Action != model.ActionUpgrade || !slices.Equal(planned, want) || !slices.Equal(configured, []string{"ConfigMap " + tc.name + "-settings"}) {
				t.Fatalf("plan: %s: %s\nreplaces %v, configures %v; want upgrade replacing %v, configuring the ConfigMap", p.Action, p.Reason, planned, configured, want)
			}

			out := f.run(step("2", "b"), stepTimeout)
			var replaced []string
			for _, c := range out.Changes {
				if c.Action == model.DidReplace {
					replaced = append(replaced, c.Kind+" "+c.Name)
				}
			}
			slices.Sort(replaced)
			if !slices.Equal(replaced, planned) {
				t.Errorf("apply replaced %v, the plan said %v (detail %q)", replaced, planned, out.Detail)
			}
			after := f.uids(t, tc.name)
			for _, kind := range []string{"Job", "Deployment"} {
				if after[kind] == before[kind] {
					t.Errorf("the %s was not replaced: same UID %s", kind, after[kind])
				}
			}
			if after["ConfigMap"] != before["ConfigMap"] || f.configMap(tc.name + "-settings")["tag"] != "2" {
				t.Errorf("the ConfigMap was not configured in place: UID %s -> %s, data %v", before["ConfigMap"], after["ConfigMap"], f.configMap(tc.name+"-settings"))
			}

			p, err = f.exec.Plan(kube.WithLiveCache(ctx), step("2", "b"), runner.PlanInput{})
			if err != nil || p.Action != model.ActionUnchanged {
				t.Errorf("the plan after the replacement: %s: %s (%v); want unchanged", p.Action, p.Reason, err)
			}
		})
	}
}

// uids are the UIDs of the replace chart's objects in release's namespace, by kind.
func (f *fixture) uids(t *testing.T, release string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	c := testCluster.Client
	job, err := c.BatchV1().Jobs(f.ns).Get(ctx, release+"-migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep, err := c.AppsV1().Deployments(f.ns).Get(ctx, release+"-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := c.CoreV1().ConfigMaps(f.ns).Get(ctx, release+"-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"Job": string(job.UID), "Deployment": string(dep.UID), "ConfigMap": string(cm.UID)}
}
