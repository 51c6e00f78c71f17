package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/khook/khook/model"
)

// dataSpec writes a spec with a state record whose step store applies a
// ConfigMap and a claim per name in claims, each bound to its own volume
// (volume), with prune (a step-level prune: value, "" for none); a
// non-empty del adds a delete step: its body.
func dataSpec(t *testing.T, ns string, claims []string, prune, del string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: data}\nstate: {namespace: %s}\nsteps:\n  - name: store\n", ns)
	if prune != "" {
		fmt.Fprintf(&b, "    prune: %s\n", prune)
	}
	fmt.Fprintf(&b, "    apply:\n      namespace: %s\n      manifests:\n      - inline: |\n          {apiVersion: v1, kind: ConfigMap, metadata: {name: anchor}, data: {k: v}}\n", ns)
	for _, c := range claims {
		fmt.Fprintf(&b, "      - inline: |\n          {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: %s}, spec: {storageClassName: \"\", volumeName: %s, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}\n", c, volumeName(ns, c))
	}
	if del != "" {
		fmt.Fprintf(&b, "  - name: drop\n    needs: [store]\n    delete: %s\n", del)
	}
	path := filepath.Join(t.TempDir(), "khook.yaml")
	must(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

func volumeName(ns, claim string) string { return ns + "-" + claim }

// volume makes the PersistentVolume claim ns/claim binds to (1Gi, Retain,
// no class: the binder binds them statically), removed after the test.
func volume(t *testing.T, ns, claim string) {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: volumeName(ns, claim)}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim},
		PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/khook-e2e/" + volumeName(ns, claim)}},
	}}
	_, err := kc.Client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{})
	must(t, err)
	t.Cleanup(func() {
		_ = kc.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
}

// bound awaits each claim's being bound to its volume and returns their
// UIDs.
func bound(t *testing.T, ns string, claims ...string) map[string]types.UID {
	t.Helper()
	uids := map[string]types.UID{}
	for _, c := range claims {
		err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			pvc, err := kc.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, c, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			uids[c] = pvc.UID
			return pvc.Status.Phase == corev1.ClaimBound, nil
		})
		if err != nil {
			t.Fatalf("claim %s/%s not bound: %v", ns, c, err)
		}
	}
	return uids
}

// claimUID is the live claim's UID, "" when it is gone.
func claimUID(t *testing.T, ns, name string) types.UID {
	t.Helper()
	pvc, err := kc.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	must(t, err)
	return pvc.UID
}

// planOf plans file as JSON and as text; it returns the plan and the text.
func planOf(t *testing.T, file string) (model.Plan, string, int) {
	t.Helper()
	out := khook(t, invocation{Args: []string{"plan", "-f", file, "-o", "json"}})
	var p model.Plan
	if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil {
		t.Fatalf("plan: exit %d, %v\n%s%s", out.Code, err, out.Stdout, out.Stderr)
	}
	text := khook(t, invocation{Args: []string{"plan", "-f", file}})
	return p, text.Stdout + text.Stderr, out.Code
}

// objectOf is the planned object kind/name of step.
func objectOf(p model.Plan, step, kind, name string) (model.ObjectPlan, bool) {
	for _, st := range p.Steps {
		if st.Name != step {
			continue
		}
		for _, o := range st.Objects {
			if o.Kind == kind && o.Name == name {
				return o, true
			}
		}
	}
	return model.ObjectPlan{}, false
}

// Data goes only with a word (#39 point 6): a claim that left an apply
// step's manifests is kept by pruning, planned as keep naming its volume,
// unless prune: {data: true}; then the plan (JSON, text, verdict) names the
// data that goes and apply deletes it.
func TestPruneKeepsDataWithoutAWord(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	for _, c := range []string{"a", "b"} {
		volume(t, ns, c)
	}
	if out := applySpec(t, dataSpec(t, ns, []string{"a", "b"}, "", "")); out.Code != 0 {
		t.Fatalf("apply v1: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	uids := bound(t, ns, "a", "b")

	// Without a word: both kept, each saying what it holds.
	v2 := dataSpec(t, ns, []string{"b"}, "", "")
	p, text, _ := planOf(t, v2)
	o, ok := objectOf(p, "prune/store", "PersistentVolumeClaim", "a")
	wantKept := fmt.Sprintf("kept: deleting it deletes its data (volume %s, 1Gi, reclaimPolicy Retain); set prune: {data: true} to delete both", volumeName(ns, "a"))
	if !ok || o.Action != model.ActionKeep || o.Reason != wantKept || o.With != "" {
		t.Errorf("plan of the claim that left the spec: %+v (found %v), want keep: %q", o, ok, wantKept)
	}
	if !strings.Contains(text, "keep") || !strings.Contains(text, "set prune: {data: true}") || strings.Contains(text, "delete  PersistentVolumeClaim") {
		t.Errorf("the text plan does not say the claim is kept and why:\n%s", text)
	}
	if v, want := model.PlanVerdict(&p, false).Text, "No changes to apply; 1 object kept: PersistentVolumeClaim "+ns+"/a."; v != want {
		t.Errorf("the verdict of a plan that keeps a claim = %q, want %q", v, want)
	}
	out := applySpec(t, v2)
	if out.Code != 0 {
		t.Fatalf("apply v2: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	if got := claimUID(t, ns, "a"); got != uids["a"] {
		t.Errorf("claim a: uid %q after pruning, want it kept (%s)", got, uids["a"])
	}
	var said bool
	for _, st := range out.Results.Steps {
		said = said || st.Name == "prune/store" && strings.Contains(st.Detail+st.Error, "set prune: {data: true}")
		for _, c := range st.Changes {
			if c.Kind == "PersistentVolumeClaim" && c.Action == model.DidDelete {
				t.Errorf("apply deleted claim %s without a word", c.Name)
			}
		}
	}
	if !said {
		t.Errorf("apply's results do not say why the claim was kept: %+v", out.Results.Steps)
	}

	// With the word: the plan names the data that goes, and apply deletes it.
	v3 := dataSpec(t, ns, nil, "{data: true}", "")
	p, text, _ = planOf(t, v3)
	o, ok = objectOf(p, "prune/store", "PersistentVolumeClaim", "b")
	wantWith := fmt.Sprintf("its data (volume %s, 1Gi, reclaimPolicy Retain)", volumeName(ns, "b"))
	if !ok || o.Action != model.ActionDelete || o.With != wantWith {
		t.Errorf("plan with prune: {data: true}: %+v (found %v), want delete with %q", o, ok, wantWith)
	}
	if want := fmt.Sprintf("delete  PersistentVolumeClaim %s/b and %s", ns, wantWith); !strings.Contains(text, want) {
		t.Errorf("the text plan lacks %q:\n%s", want, text)
	}
	if want := fmt.Sprintf("It deletes PersistentVolumeClaim %s/b and %s.", ns, wantWith); !strings.Contains(model.PlanVerdict(&p, false).Text, want) {
		t.Errorf("the plan's verdict (summary, comment) %q lacks %q", model.PlanVerdict(&p, false).Text, want)
	}
	out = applySpec(t, v3)
	if out.Code != 0 {
		t.Fatalf("apply v3: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	said = false
	for _, st := range out.Results.Steps {
		said = said || st.Name == "prune/store" && strings.Contains(st.Detail, "and "+wantWith)
	}
	if !said {
		t.Errorf("apply's results do not name the data that went: %+v", out.Results.Steps)
	}
	if got := claimUID(t, ns, "b"); got != "" {
		t.Errorf("claim b still there (uid %s) after pruning with prune: {data: true}", got)
	}
	if got := claimUID(t, ns, "a"); got != uids["a"] {
		t.Errorf("claim a (kept and forgotten before) changed: uid %q, want %s", got, uids["a"])
	}
}

// A delete step keeps a claim unless it says deleteData: true (#39 point
// 6), by resource or by manifests, the plan saying what data it holds.
func TestDeleteStepKeepsDataWithoutAWord(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	for _, c := range []string{"a", "b"} {
		volume(t, ns, c)
	}
	if out := applySpec(t, dataSpec(t, ns, []string{"a", "b"}, "false", "")); out.Code != 0 {
		t.Fatalf("apply v1: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	uids := bound(t, ns, "a", "b")
	byResource := fmt.Sprintf("{resource: persistentvolumeclaim/a, namespace: %s}", ns)
	byManifest := fmt.Sprintf("{namespace: %s, manifests: [{inline: '{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: b}}'}]}", ns)
	for _, c := range []struct{ name, claim, del string }{{"resource", "a", byResource}, {"manifests", "b", byManifest}} {
		file := dataSpec(t, ns, nil, "false", c.del)
		p, text, _ := planOf(t, file)
		o, ok := objectOf(p, "drop", "PersistentVolumeClaim", c.claim)
		want := fmt.Sprintf("deleting it deletes its data (volume %s, 1Gi, reclaimPolicy Retain); set deleteData: true on the step to delete both", volumeName(ns, c.claim))
		if !ok || o.Action != model.ActionKeep || !strings.Contains(o.Reason, want) {
			t.Errorf("%s: plan of the delete step: %+v (found %v), want keep: %q", c.name, o, ok, want)
		}
		if !strings.Contains(text, want) {
			t.Errorf("%s: the text plan lacks %q:\n%s", c.name, want, text)
		}
		out := applySpec(t, file)
		if out.Code != 0 {
			t.Fatalf("%s: apply: exit %d\n%s%s", c.name, out.Code, out.Stdout, out.Stderr)
		}
		if got := claimUID(t, ns, c.claim); got != uids[c.claim] {
			t.Errorf("%s: claim %s: uid %q, want it kept (%s)", c.name, c.claim, got, uids[c.claim])
		}

		file = dataSpec(t, ns, nil, "false", strings.Replace(c.del, "{", "{deleteData: true, ", 1))
		p, text, _ = planOf(t, file)
		o, ok = objectOf(p, "drop", "PersistentVolumeClaim", c.claim)
		with := fmt.Sprintf("its data (volume %s, 1Gi, reclaimPolicy Retain)", volumeName(ns, c.claim))
		if !ok || o.Action != model.ActionDelete || o.With != with {
			t.Errorf("%s: plan with deleteData: %+v (found %v), want delete with %q", c.name, o, ok, with)
		}
		for sink, said := range map[string]string{"text plan": text, "verdict": model.PlanVerdict(&p, false).Text} {
			if !strings.Contains(said, "PersistentVolumeClaim "+ns+"/"+c.claim+" and "+with) {
				t.Errorf("%s: the %s does not name the data that goes:\n%s", c.name, sink, said)
			}
		}
		out = applySpec(t, file)
		if out.Code != 0 {
			t.Fatalf("%s: apply with deleteData: exit %d\n%s%s", c.name, out.Code, out.Stdout, out.Stderr)
		}
		went := "deleted PersistentVolumeClaim " + ns + "/" + c.claim + " and " + with
		for _, st := range out.Results.Steps {
			if st.Name == "drop" && !strings.Contains(st.Detail, went) {
				t.Errorf("%s: apply's detail %q does not say the data went (%q)", c.name, st.Detail, went)
			}
		}
		if got := claimUID(t, ns, c.claim); got != "" {
			t.Errorf("%s: claim %s still there (uid %s) with deleteData: true", c.name, c.claim, got)
		}
	}
}

// Replacing a LoadBalancer Service (onImmutable: recreate, its clusterIP
// changes) says, in the plan and apply's detail, that it loses its address.
func TestReplacingALoadBalancerSaysItLosesItsAddress(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	h := fnv.New32a()
	_, _ = h.Write([]byte(ns))
	third := 100 + h.Sum32()%100 // a /24 of the service range of its own
	write := func(ip string) string {
		spec := fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: lb}
steps:
  - name: lb
    onImmutable: recreate
    apply:
      namespace: %s
      manifests:
      - inline: |
          {apiVersion: v1, kind: Service, metadata: {name: front}, spec: {type: LoadBalancer, clusterIP: %s, selector: {app: front}, ports: [{port: 80}]}}
`, ns, ip)
		path := filepath.Join(t.TempDir(), "khook.yaml")
		must(t, os.WriteFile(path, []byte(spec), 0o644))
		return path
	}
	if out := applySpec(t, write(fmt.Sprintf("10.96.%d.10", third))); out.Code != 0 {
		t.Fatalf("apply v1: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	ctx := context.Background()
	svc, err := kc.Client.CoreV1().Services(ns).Get(ctx, "front", metav1.GetOptions{})
	must(t, err)
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}} // what a cloud's controller would set
	_, err = kc.Client.CoreV1().Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	must(t, err)

	v2 := write(fmt.Sprintf("10.96.%d.11", third))
	p, text, _ := planOf(t, v2)
	const loses = "it loses its load balancer address 203.0.113.7 (a new one is assigned)"
	o, _ := objectOf(p, "lb", "Service", "front")
	if o.Action != model.ActionReplace || o.Reason != loses || len(p.Steps) != 1 || !strings.Contains(p.Steps[0].Reason, loses) {
		t.Errorf("plan: object %+v, step %+v, want replace saying %q", o, p.Steps, loses)
	}
	if !strings.Contains(text, loses) {
		t.Errorf("the text plan does not say the Service loses its address:\n%s", text)
	}
	out := applySpec(t, v2)
	if out.Code != 0 || len(out.Results.Steps) != 1 || !strings.Contains(out.Results.Steps[0].Detail, "replaced Service "+ns+"/front: "+loses) {
		t.Fatalf("apply v2: exit %d, want the detail to say the address goes\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	now, err := kc.Client.CoreV1().Services(ns).Get(ctx, "front", metav1.GetOptions{})
	must(t, err)
	if now.UID == svc.UID || now.Spec.ClusterIP != fmt.Sprintf("10.96.%d.11", third) {
		t.Errorf("the Service was not replaced: uid %s (was %s), clusterIP %s", now.UID, svc.UID, now.Spec.ClusterIP)
	}
}
