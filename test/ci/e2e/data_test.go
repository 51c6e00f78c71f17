package e2e

import (
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/test/ci/citest"
)

// dataSpec is a spec with a state record whose step store applies a
// ConfigMap and a claim per name in claims, each bound to its own volume
// (test/e2e/data_test.go's manifests), with prune ("" for none).
func dataSpec(ns string, claims []string, prune string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: data}\nstate: {namespace: %s}\nsteps:\n  - name: store\n", ns)
	if prune != "" {
		fmt.Fprintf(&b, "    prune: %s\n", prune)
	}
	fmt.Fprintf(&b, "    apply:\n      namespace: %s\n      manifests:\n      - inline: |\n          {apiVersion: v1, kind: ConfigMap, metadata: {name: anchor}, data: {k: v}}\n", ns)
	for _, c := range claims {
		fmt.Fprintf(&b, "      - inline: |\n          {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: %s}, spec: {storageClassName: \"\", volumeName: %s, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}\n", c, ns+"-"+c)
	}
	return b.String()
}

// dataVolume makes the Retain volume the claim ns/claim binds to
// statically, removed after the test.
func dataVolume(t *testing.T, ns, claim string) {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + claim}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim},
		PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/khook-ci-e2e/" + ns + "-" + claim}},
	}}
	_, err := kube.Client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{})
	must(t, err)
	t.Cleanup(func() {
		_ = kube.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
}

// dataClaim is the live claim ns/name's UID and phase, "" when it is gone.
func dataClaim(t *testing.T, ns, name string) (types.UID, corev1.PersistentVolumeClaimPhase) {
	t.Helper()
	pvc, err := kube.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", ""
	}
	must(t, err)
	return pvc.UID, pvc.Status.Phase
}

// Data goes only with a word (#39 point 6), through every output of khook
// ci: a claim that left the spec is planned keep, the job summary and the
// PR comment saying what data it holds and the word that deletes it, and
// apply keeps it (same UID) and says so; with prune: {data: true} the
// plan's log, summary, comment and a warning annotation name the data
// that goes, and apply deletes it and says so.
func TestDataKeptWithoutAWordInEveryCIOutput(t *testing.T) {
	ns := kube.Namespace(t)
	for _, c := range []string{"a", "b"} {
		dataVolume(t, ns, c)
	}
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "repair.yaml", map[string]string{"command": "apply"})
	// run runs command on spec; into is what its JSON file holds.
	run := func(command, spec, file string, into any) (citest.Result, map[string]string, string) {
		t.Helper()
		g.ResetFiles()
		g.Write(t, "khook.yaml", spec)
		g.Set("INPUT_COMMAND=" + command)
		res := citest.Run(t, g.Workspace, g.Environ)
		outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
		if outs[file] == "" {
			t.Fatalf("%s: no %s output: %v\n%s", command, file, outs, res.Stdout)
		}
		data, err := os.ReadFile(filepath.Join(g.Workspace, outs[file]))
		must(t, err)
		must(t, json.Unmarshal(data, into))
		return res, outs, g.Read(t, "summary")
	}
	comment := func() string {
		t.Helper()
		cs := srv.Comments(7)
		if len(cs) != 1 {
			t.Fatalf("want one PR comment, got %d", len(cs))
		}
		return cs[0].Body
	}
	var results model.Results
	if res, _, _ := run("apply", dataSpec(ns, []string{"a", "b"}, ""), "results-json-path", &results); res.Code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", res.Code, res.Stdout)
	}
	uids := map[string]types.UID{}
	for _, c := range []string{"a", "b"} {
		err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			var phase corev1.PersistentVolumeClaimPhase
			uids[c], phase = dataClaim(t, ns, c)
			return phase == corev1.ClaimBound, nil
		})
		if err != nil {
			t.Fatalf("claim %s/%s not bound: %v", ns, c, err)
		}
	}
	with := func(c string) string { return fmt.Sprintf("its data (volume %s-%s, 1Gi, reclaimPolicy Retain)", ns, c) }
	kept := "kept: deleting it deletes " + with("a") + "; set prune: {data: true} to delete both"

	// Without a word: the plan keeps claim a, every output saying why.
	v2 := dataSpec(ns, []string{"b"}, "")
	var plan model.Plan
	res, outs, summary := run("plan", v2, "plan-json-path", &plan)
	if res.Code != 0 {
		t.Fatalf("plan v2: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	var planned model.ObjectPlan
	for _, st := range plan.Steps {
		for _, o := range st.Objects {
			if st.Name == "prune/store" && o.Kind == "PersistentVolumeClaim" && o.Name == "a" {
				planned = o
			}
		}
	}
	if planned.Action != model.ActionKeep || planned.Reason != kept || planned.With != "" {
		t.Errorf("plan JSON of the claim that left the spec: %+v, want keep: %q", planned, kept)
	}
	for sink, text := range map[string]string{"log": res.Stdout, "summary": summary, "comment": comment()} {
		if !strings.Contains(text, "keep") || !strings.Contains(text, with("a")) || !strings.Contains(text, "set prune: {data: true}") {
			t.Errorf("the plan's %s does not say claim a is kept, what it holds and the word that deletes it:\n%s", sink, text)
		}
		if strings.Contains(text, "deletes PersistentVolumeClaim") || strings.Contains(text, "It deletes") {
			t.Errorf("the plan's %s says a claim goes:\n%s", sink, text)
		}
	}
	// A plan that keeps what the spec dropped does not say the cluster
	// matches the spec: the headline (log, summary, comment) says what it keeps.
	headline := fmt.Sprintf("No changes to apply; 1 object kept: PersistentVolumeClaim %s/a.", ns)
	for sink, text := range map[string]string{"log": res.Stdout, "summary": summary, "comment": comment()} {
		if !strings.Contains(text, headline) || strings.Contains(text, "matches the spec") {
			t.Errorf("the plan's %s lacks the headline %q (or says the cluster matches the spec):\n%s", sink, headline, text)
		}
	}
	// The step table's row (summary and comment alike): the keep and why.
	row := fmt.Sprintf("| prune/store | prune | keep | keep PersistentVolumeClaim %s/a (%s) |", ns, kept)
	for sink, text := range map[string]string{"summary": summary, "comment": comment()} {
		if !strings.Contains(text, row) {
			t.Errorf("the plan's %s lacks the row %q:\n%s", sink, row, text)
		}
	}
	for _, line := range annotationLine.FindAllString(res.Stdout, -1) {
		if strings.HasPrefix(line, "::warning") && strings.Contains(line, "deletes PersistentVolumeClaim") {
			t.Errorf("a data-deletion warning without the word: %s", line)
		}
	}

	results = model.Results{}
	res, outs, summary = run("apply", v2, "results-json-path", &results)
	if res.Code != 0 {
		t.Fatalf("apply v2: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	if got, _ := dataClaim(t, ns, "a"); got != uids["a"] {
		t.Errorf("claim a: uid %q after apply, want it kept (%s)", got, uids["a"])
	}
	for _, st := range results.Steps {
		for _, c := range st.Changes {
			if c.Kind == "PersistentVolumeClaim" && c.Action == model.DidDelete {
				t.Errorf("apply deleted claim %s without a word", c.Name)
			}
		}
	}
	for sink, text := range map[string]string{"summary": summary, "comment": comment()} {
		if !strings.Contains(text, "set prune: {data: true}") {
			t.Errorf("apply's %s does not say why claim a was kept:\n%s", sink, text)
		}
	}

	// With the word: the plan names the data that goes; apply deletes it.
	v3 := dataSpec(ns, nil, "{data: true}")
	plan = model.Plan{}
	res, outs, summary = run("plan", v3, "plan-json-path", &plan)
	if res.Code != 0 {
		t.Fatalf("plan v3: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	goes := fmt.Sprintf("PersistentVolumeClaim %s/b and %s", ns, with("b"))
	for sink, text := range map[string]string{"log": res.Stdout, "summary": summary, "comment": comment()} {
		if !strings.Contains(text, goes) {
			t.Errorf("the plan's %s does not name the data that goes (%q):\n%s", sink, goes, text)
		}
	}
	// The step table's row says the data goes with the claim.
	row = fmt.Sprintf("| prune/store | prune | **delete** | delete PersistentVolumeClaim %s/b and %s (", ns, with("b"))
	for sink, text := range map[string]string{"summary": summary, "comment": comment()} {
		if !strings.Contains(text, row) {
			t.Errorf("the plan's %s lacks the row %q:\n%s", sink, row, text)
		}
	}
	var warned bool
	for _, line := range annotationLine.FindAllString(res.Stdout, -1) {
		warned = warned || strings.HasPrefix(line, "::warning") && strings.Contains(line, "deletes PersistentVolumeClaim "+ns+"/b and its data (volume "+ns+"-b")
	}
	if !warned {
		t.Errorf("no warning annotation naming the data that goes:\n%s", strings.Join(annotationLine.FindAllString(res.Stdout, -1), "\n"))
	}

	results = model.Results{}
	res, outs, summary = run("apply", v3, "results-json-path", &results)
	if res.Code != 0 || outs["changes"] != "true" {
		t.Fatalf("apply v3: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	if got, _ := dataClaim(t, ns, "b"); got != "" {
		t.Errorf("claim b still there (uid %s) after pruning with prune: {data: true}", got)
	}
	if got, _ := dataClaim(t, ns, "a"); got != uids["a"] {
		t.Errorf("claim a (kept and forgotten before) changed: uid %q, want %s", got, uids["a"])
	}
	for sink, text := range map[string]string{"summary": summary, "comment": comment()} {
		if !strings.Contains(text, "and "+with("b")) {
			t.Errorf("apply's %s does not name the data that went:\n%s", sink, text)
		}
	}
}

// An apply onto an object being deleted (#39 point 4), through khook ci:
// the plan's log, summary, comment and a warning annotation say it is
// being deleted and by what; an apply whose timeout ends the wait fails,
// its summary and comment saying so, the object untouched; once it goes,
// apply creates it anew.
func TestDataTerminatingObjectInEveryCIOutput(t *testing.T) {
	ns := kube.Namespace(t)
	const hold = "khook.test/hold"
	ctx := context.Background()
	cms := kube.Client.CoreV1().ConfigMaps(ns)
	old, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Finalizers: []string{hold}}, Data: map[string]string{"key": "old"}}, metav1.CreateOptions{})
	must(t, err)
	must(t, cms.Delete(ctx, "settings", metav1.DeleteOptions{}))
	// release removes hold: the terminating object goes.
	release := func() error {
		_, err := cms.Patch(context.Background(), "settings", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	t.Cleanup(func() { _ = release() })
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "repair.yaml", map[string]string{"command": "plan"})
	g.Write(t, "khook.yaml", fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: terminating}
steps:
  - name: settings
    timeout: 2s
    apply:
      namespace: %s
      manifests:
      - inline: |
          {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {key: new}}
`, ns))
	comment := func() string {
		t.Helper()
		cs := srv.Comments(7)
		if len(cs) != 1 {
			t.Fatalf("want one PR comment, got %d", len(cs))
		}
		return cs[0].Body
	}
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("plan: exit %d\n%s", res.Code, res.Stdout)
	}
	deleting := "configmap/settings in namespace " + ns + " is being deleted ("
	for sink, text := range map[string]string{"log": res.Stdout, "summary": g.Read(t, "summary"), "comment": comment()} {
		if !strings.Contains(text, deleting) || !strings.Contains(text, hold) {
			t.Errorf("the plan's %s does not say settings is being deleted and by what:\n%s", sink, text)
		}
	}
	var warned bool
	for _, line := range annotationLine.FindAllString(res.Stdout, -1) {
		warned = warned || strings.HasPrefix(line, "::warning") && strings.Contains(line, "is being deleted")
	}
	if !warned {
		t.Errorf("no warning annotation saying settings is being deleted:\n%s", res.Stdout)
	}

	// Held: the step's timeout ends the wait; every output says why.
	g.ResetFiles()
	g.Set("INPUT_COMMAND=apply")
	res = citest.Run(t, g.Workspace, g.Environ)
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 1 || outs["status"] != "failed" || outs["failed-steps"] != "settings" {
		t.Fatalf("apply onto the held object: exit %d outputs %v, want 1, failed, settings\n%s", res.Code, outs, res.Stdout)
	}
	for sink, text := range map[string]string{"log": res.Stdout, "summary": g.Read(t, "summary"), "comment": comment()} {
		if !strings.Contains(text, "it is being deleted and did not go") || !strings.Contains(text, hold) {
			t.Errorf("the failed apply's %s does not say settings is being deleted and by what:\n%s", sink, text)
		}
	}
	cm, err := cms.Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || cm.UID != old.UID || cm.Data["key"] != "old" || cm.DeletionTimestamp == nil {
		t.Fatalf("after the refused apply: %v, want the held object untouched", err)
	}

	// Gone: apply creates it anew.
	must(t, release())
	g.ResetFiles()
	res = citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("apply once released: exit %d\n%s", res.Code, res.Stdout)
	}
	cm, err = cms.Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || cm.UID == old.UID || cm.Data["key"] != "new" || cm.DeletionTimestamp != nil {
		t.Errorf("after apply: %v, want a new object with the manifest's data", err)
	}
}
