package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/kube"
	runplan "github.com/khook/khook/runner/plan"
	"github.com/khook/khook/runner/prune"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/cluster"
)

// pruneWorld is one namespace and spec file, applied and planned through
// the actions as the CLI runs them.
type pruneWorld struct {
	t    *testing.T
	ns   string
	file string
	cfg  *Configuration
}

func newPruneWorld(t *testing.T) *pruneWorld {
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	return &pruneWorld{t: t, ns: testCluster.Namespace(t), file: filepath.Join(t.TempDir(), "khook.yaml"),
		cfg: &Configuration{Clients: clients, Redactor: redact.New()}}
}

// spec writes steps (name: manifests, in order; a step named x-after-y
// needs y) and loads them.
func (w *pruneWorld) spec(steps string) *spec.Spec {
	w.t.Helper()
	text := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: prune}\nstate: {namespace: %s}\nsteps:\n%s", w.ns, steps)
	if err := os.WriteFile(w.file, []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
	s, err := spec.Load(spec.LoadOptions{Files: []string{w.file}})
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

func (w *pruneWorld) applyStep(name string, cms ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- name: %s\n  apply:\n    namespace: %s\n    manifests:\n", name, w.ns)
	for _, cm := range cms {
		fmt.Fprintf(&b, "    - inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: %s}, data: {k: v}}'\n", cm)
	}
	return b.String()
}

func (w *pruneWorld) apply(s *spec.Spec) *model.Results {
	w.t.Helper()
	res, err := (&ApplyCommand{Config: w.cfg}).Run(context.Background(), s)
	if err != nil {
		w.t.Fatal(err)
	}
	return res
}

func (w *pruneWorld) plan(s *spec.Spec) *model.Plan {
	w.t.Helper()
	p, err := (&PlanCommand{Config: w.cfg}).Run(context.Background(), s)
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *pruneWorld) record(s *spec.Spec) *state.Record {
	w.t.Helper()
	ref, _ := state.RefFor(s)
	rec, err := state.NewStore(testCluster.Client, ref).Load(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return rec
}

func (w *pruneWorld) exists(name string) bool {
	_, err := testCluster.Client.CoreV1().ConfigMaps(w.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatal(err)
	}
	return err == nil
}

// pruned is "action name: reason" per object the plan prunes or keeps.
func pruned(p *model.Plan) map[string]string {
	out := map[string]string{}
	for _, st := range p.Steps {
		if st.Type != model.TypePrune {
			continue
		}
		for _, o := range st.Objects {
			out[o.Name] = string(o.Action) + ": " + o.Reason
		}
	}
	return out
}

// The record holds what each step applied, with UIDs and needs; what a
// step stops producing is planned and deleted after the other steps.
func TestPruneInventory(t *testing.T) {
	w := newPruneWorld(t)
	s := w.spec(w.applyStep("cms", "a", "b") + w.applyStep("more", "c") + "  needs: [cms]\n")
	if res := w.apply(s); res.Status != model.RunOK {
		t.Fatalf("apply: %+v", res)
	}
	rec := w.record(s)
	cm, err := testCluster.Client.CoreV1().ConfigMaps(w.ns).Get(context.Background(), "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := model.Owned{Version: "v1", Kind: "ConfigMap", Namespace: w.ns, Name: "b", UID: string(cm.UID)}
	if inv := rec.Steps["cms"].Inventory; len(inv) != 2 || inv[1] != want {
		t.Errorf("inventory of cms = %+v, want [a, %+v]", inv, want)
	}
	if needs := rec.Steps["more"].Needs; len(needs) != 1 || needs[0] != "cms" {
		t.Errorf("needs of more = %v", needs)
	}

	s = w.spec(w.applyStep("cms", "a") + w.applyStep("more", "c") + "  needs: [cms]\n")
	p := w.plan(s)
	if got := pruned(p)["b"]; got != `delete: no longer in step "cms"` {
		t.Errorf("plan of b = %q", got)
	}
	if !p.Changes {
		t.Error("a plan that prunes must report changes")
	}
	res := w.apply(s)
	last := res.Steps[len(res.Steps)-1]
	if last.Name != "prune/cms" || last.Status != model.StatusOK || len(last.Changes) != 1 || last.Changes[0].Action != model.DidDelete {
		t.Errorf("prune result = %+v", last)
	}
	if w.exists("b") || !w.exists("a") {
		t.Errorf("after apply: b exists %v (want false), a exists %v (want true)", w.exists("b"), w.exists("a"))
	}
	if p := w.plan(s); p.Changes || len(pruned(p)) != 0 {
		t.Errorf("the next plan prunes %v", pruned(p))
	}
}

// A step that failed keeps its previous inventory: nothing it "stopped
// producing" is pruned. A step left out by selection is not pruned either.
func TestPruneFailedOrUnselectedStep(t *testing.T) {
	w := newPruneWorld(t)
	s := w.spec(w.applyStep("cms", "a", "b"))
	w.apply(s)
	s = w.spec(w.applyStep("cms", "a", "Not_A_Name"))
	res := w.apply(s)
	if res.Status != model.RunFailed || !w.exists("b") {
		t.Fatalf("a failed step pruned b (exists %v), run %s", w.exists("b"), res.Status)
	}
	if inv := w.record(s).Steps["cms"].Inventory; len(inv) != 2 || inv[1].Name != "b" {
		t.Errorf("the failed step's inventory = %+v, want a, b", inv)
	}

	s = w.spec(w.applyStep("cms", "a") + w.applyStep("other", "c"))
	s.Steps[0].Skip = spec.SkipNotSelected
	w.apply(s)
	if !w.exists("b") {
		t.Error("a step left out by selection was pruned")
	}
}

// The safety rules, each kept with the reason: a replaced object (new UID),
// one khook's field manager no longer manages, one annotated
// khook.io/prune: disabled, one that existed before khook applied it, and
// prune: false.
func TestPruneSafety(t *testing.T) {
	ctx := context.Background()
	w := newPruneWorld(t)
	cms := testCluster.Client.CoreV1().ConfigMaps(w.ns)
	pre := &corev1.ConfigMap{}
	pre.Name = "adopted"
	if _, err := cms.Create(ctx, pre, metav1.CreateOptions{FieldManager: "a-script"}); err != nil {
		t.Fatal(err)
	}
	s := w.spec(w.applyStep("cms", "keep", "replaced", "unmanaged", "annotated", "adopted") + w.applyStep("off", "held") + "  prune: false\n")
	w.apply(s)
	w.apply(s) // a second apply keeps what khook found, not what it last saw
	if err := cms.Delete(ctx, "replaced", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	cm.Name = "replaced"
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	// Strip every manager's fields: the object is no longer khook's.
	if _, err := cms.Patch(ctx, "unmanaged", types.MergePatchType, []byte(`{"metadata":{"managedFields":[{}]}}`), metav1.PatchOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "annotated", types.MergePatchType, []byte(`{"metadata":{"annotations":{"khook.io/prune":"disabled"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	s = w.spec(w.applyStep("cms", "keep") + w.applyStep("off", "stay") + "  prune: false\n")
	got := pruned(w.plan(s))
	for name, want := range map[string]string{
		"replaced":  "no-op: kept: replaced since khook applied it",
		"unmanaged": "no-op: kept: khook's field manager no longer manages it",
		"annotated": "no-op: kept: annotated khook.io/prune: disabled",
		"held":      "no-op: kept: prune: false",
		"adopted":   "no-op: kept: it existed before khook applied it",
	} {
		if !strings.HasPrefix(got[name], want) {
			t.Errorf("plan of %s = %q, want %q...", name, got[name], want)
		}
	}
	w.apply(s)
	for _, name := range []string{"keep", "replaced", "unmanaged", "annotated", "held", "adopted"} {
		if !w.exists(name) {
			t.Errorf("%s was deleted", name)
		}
	}
	if p := w.plan(s); len(pruned(p)) != 0 {
		t.Errorf("kept objects are forgotten once apply kept them; the next plan has %v", pruned(p))
	}
}

// A step that left the spec is pruned after the others, and destroy
// deletes what the inventory holds of steps that left the spec.
func TestPruneLeftStepAndDestroy(t *testing.T) {
	w := newPruneWorld(t)
	s := w.spec(w.applyStep("base", "a") + w.applyStep("top", "b") + "  needs: [base]\n")
	w.apply(s)
	s = w.spec(w.applyStep("other", "c"))
	p := w.plan(s)
	if got := pruned(p); got["a"] != `delete: step "base" left the spec` || got["b"] != `delete: step "top" left the spec` {
		t.Errorf("plan = %v", got)
	}
	var order []string
	for _, st := range p.Steps {
		order = append(order, st.Name)
	}
	if strings.Join(order, ",") != "other,prune/top,prune/base" {
		t.Errorf("plan order %v: top needed base, so it goes first", order)
	}
	res, err := (&DestroyCommand{Config: w.cfg}).Run(context.Background(), s)
	if err != nil || res.Status != model.RunOK {
		t.Fatalf("destroy: %v %+v", err, res)
	}
	for _, name := range []string{"a", "b", "c"} {
		if w.exists(name) {
			t.Errorf("destroy left %s", name)
		}
	}
}

// Without a state record there is no inventory: the plan says so once.
func TestPruneNeedsRecord(t *testing.T) {
	w := newPruneWorld(t)
	text := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: prune}\nsteps:\n%s", w.applyStep("cms", "a"))
	s, err := spec.Load(spec.LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(text)})
	if err != nil {
		t.Fatal(err)
	}
	if p := w.plan(s); len(p.Notes) != 1 || p.Notes[0] != prune.NoRecordNote {
		t.Errorf("notes = %q", p.Notes)
	}
	s.Prune = &spec.Prune{Disabled: true}
	if p := w.plan(s); len(p.Notes) != 0 {
		t.Errorf("with prune: false the plan needs no note: %q", p.Notes)
	}
	// The record is a Secret: a fork's plan (lookup-secrets deny) reads none.
	s = w.spec(w.applyStep("cms", "a"))
	p, err := (&PlanCommand{Config: &Configuration{Clients: w.cfg.Clients, LookupSecrets: runplan.LookupDeny}}).Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "pruning is not planned: under lookup-secrets deny") {
		t.Errorf("notes under deny = %q", p.Notes)
	}
}

// A CRD a step no longer applies is kept while custom resources of it
// exist (planned keep, counted, with a warning); with prune: {crds: true}
// the plan says its custom resources go with it.
func TestPruneKeepsCRDWithData(t *testing.T) {
	w := newPruneWorld(t)
	group := w.ns + ".prune.khook.test"
	crd := fmt.Sprintf(`{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: things.%[1]s}, spec: {group: %[1]s, scope: Namespaced, names: {kind: Thing, plural: things}, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]}}`, group)
	step := func(prune string, crds ...string) string {
		b := w.applyStep("crds", "cm")
		for _, c := range crds {
			b += "    - inline: '" + c + "'\n"
		}
		return b + prune
	}
	crdClient := w.cfg.Clients.Dynamic.Resource(kube.CRDMapping.Resource)
	t.Cleanup(func() { _ = crdClient.Delete(context.Background(), "things."+group, metav1.DeleteOptions{}) })
	w.apply(w.spec(step("", crd)))
	things := w.cfg.Clients.Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}).Namespace(w.ns)
	cluster.CreateServed(t, things, &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"}}})
	p := w.plan(w.spec(step("")))
	want := "keep: kept: a CustomResourceDefinition with 1 Thing object in 1 namespace: deleting it deletes them; set prune: {crds: true} to delete both"
	if got := pruned(p)["things."+group]; got != want {
		t.Errorf("plan = %q, want %q", got, want)
	}
	p = w.plan(w.spec(step("  prune: {crds: true}\n")))
	if got := pruned(p)["things."+group]; !strings.HasPrefix(got, "delete: ") {
		t.Errorf("plan with prune: {crds: true} = %q, want the deletion", got)
	}
	if gone := model.DataDeletions(p); len(gone) != 1 || gone[0] != "CRD things."+group+" and its 1 Thing object in 1 namespace" {
		t.Errorf("plan with prune: {crds: true}: data deletions %q, want the CRD with its custom resource", gone)
	}
}
