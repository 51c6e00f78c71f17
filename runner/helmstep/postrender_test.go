package helmstep

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

// A kustomize post-renderer (a targeted JSON 6902 patch, a strategic merge
// patch and an image override) shapes what the dry run predicts, what the
// release stores and applies, and what Drift compares: an out-of-band edit
// of a patched field is drift, and the converged re-run writes nothing.
func TestPostRenderers(t *testing.T) {
	f := newFixture(t)
	prs := []spec.PostRenderer{{Kustomize: &spec.KustomizePostRenderer{
		Patches: []spec.KustomizePatch{
			{Target: &spec.KustomizeTarget{Kind: "Deployment", Name: "pr-demo"}, Patch: "- op: replace\n  path: /spec/replicas\n  value: 5\n"},
			{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pr-demo\n  annotations:\n    patched-by: khook\n"},
		},
		Images: []spec.KustomizeImage{{Name: "example.invalid/demo", NewTag: "2.0.0"}},
	}}}
	st := f.step("pr", spec.Helm{Chart: chartsrc.ChartDir("demo"), PostRenderers: prs})

	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	r := f.loaded(ctx, st)
	planned, err := f.exec.DryRun(ctx, r, installOrUpgrade(r), DryRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "planned manifest", planned.Manifest, "replicas: 5", "image: example.invalid/demo:2.0.0", "patched-by: khook")

	f.run(st, stepTimeout)
	dep, err := testCluster.Client.AppsV1().Deployments(f.ns).Get(ctx, "pr-demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 5 || dep.Spec.Template.Spec.Containers[0].Image != "example.invalid/demo:2.0.0" {
		t.Errorf("live deployment: replicas %d, image %s", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
	}
	if out := f.run(st, stepTimeout); out.Writes != 0 || out.Detail != "release pr unchanged at revision 1" {
		t.Errorf("converged re-run = %q with %d writes", out.Detail, out.Writes)
	}

	// An out-of-band edit of the patched field is drift.
	if _, err := testCluster.Client.AppsV1().Deployments(f.ns).Patch(ctx, "pr-demo", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	r, err = f.exec.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := Drift(ctx, f.clients, DriftInput{Release: "pr", Namespace: f.ns, Manifest: r.Last.Manifest, Applied: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || diffs[0].Kind != "Deployment" {
		t.Errorf("drift = %+v, want the deployment", diffs)
	}

	// Dropping the post-renderers is a change, though chart and values are not.
	st.Helm.PostRenderers = nil
	if r = f.loaded(ctx, st); !r.postRenderersChanged {
		t.Error("dropping the post-renderers is not a change")
	}
	out := f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "upgraded release pr to revision 2")
	if r = f.loaded(ctx, st); r.postRenderersChanged {
		t.Errorf("after the upgrade the release still has labels %v", r.Last.Labels)
	}
}

// loaded is st's release, opened and loaded as plan and apply load it.
// installOrUpgrade is decide's verb for a release it neither skips nor
// leaves unchanged.
func installOrUpgrade(r *Release) verdict {
	if r.Installed() {
		return doUpgrade
	}
	return doInstall
}

func (f *fixture) loaded(ctx context.Context, st *spec.Step) *Release {
	f.t.Helper()
	r, err := f.exec.Open(st)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.exec.Load(ctx, r); err != nil {
		f.t.Fatal(err)
	}
	return r
}
