package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/awaitline"
)

// A StatefulSet whose claim retention deletes its claims (whenDeleted:
// Delete) is not replaced by a step's onImmutable: recreate (#39 point
// 6): an immutable change (its claim template's size) plans fail, not
// replace, naming the claim that would go, and apply leaves it (same
// UID). Its own annotation khook.io/on-immutable: recreate is the word:
// then the plan replaces it saying its claim goes, and apply replaces it.
func TestStatefulSetDeletingItsClaimsIsNotRecreatedWithoutAWord(t *testing.T) {
	ns := namespace(t)
	write := func(size, annotation string) string {
		return writeSpec(t, fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: sts}
steps:
  - name: db
    onImmutable: recreate
    apply:
      namespace: %s
      manifests:
        - inline: |
            apiVersion: apps/v1
            kind: StatefulSet
            metadata: {name: db%s}
            spec:
              serviceName: db
              replicas: 1
              selector: {matchLabels: {app: db}}
              persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
              template:
                metadata: {labels: {app: db}}
                spec: {containers: [{name: db, image: pause}]}
              volumeClaimTemplates:
                - metadata: {name: data}
                  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: %s}}}
`, ns, annotation, size))
	}
	if out := applySpec(t, write("1Gi", "")); out.Code != 0 {
		t.Fatalf("apply v1: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	sts := func() string {
		t.Helper()
		s, err := kc.Client.AppsV1().StatefulSets(ns).Get(context.Background(), "db", metav1.GetOptions{})
		must(t, err)
		return string(s.UID)
	}
	uid := sts()

	file := write("2Gi", "")
	p := planJSON(t, nil, file)
	s := p.Steps[0]
	for _, o := range s.Objects {
		if o.Action == model.ActionReplace {
			t.Errorf("plan replaces %s %s without a word: %+v", o.Kind, o.Name, o)
		}
	}
	if s.Action != model.ActionFail || !strings.Contains(s.Reason, "cannot replace statefulset.apps/db") || !strings.Contains(s.Reason, "data-db-0") {
		t.Errorf("plan: %s: %s; want fail naming the claim data-db-0 that would go with it", s.Action, s.Reason)
	}
	out := applySpec(t, file)
	expectSteps(t, out, []want{{Name: "db", Status: model.StatusFailed, Attempts: 1, Error: "data-db-0"}})
	if got := sts(); got != uid {
		t.Fatalf("apply replaced the StatefulSet without a word: uid %s -> %s", uid, got)
	}

	// The word: the object's own annotation.
	file = write("2Gi", ", annotations: {khook.io/on-immutable: recreate}")
	p = planJSON(t, nil, file)
	var replaced model.ObjectPlan
	for _, o := range p.Steps[0].Objects {
		if o.Kind == "StatefulSet" && o.Action == model.ActionReplace {
			replaced = o
		}
	}
	if replaced.Action != model.ActionReplace || !strings.Contains(replaced.Reason, "deletes its 1 PersistentVolumeClaim data-db-0") {
		t.Errorf("plan with the word: %+v (step %s: %s); want the StatefulSet replaced, saying its claim data-db-0 goes", p.Steps[0].Objects, p.Steps[0].Action, p.Steps[0].Reason)
	}
	out = applySpec(t, file)
	expectSteps(t, out, []want{{Name: "db", Status: model.StatusOK, Attempts: 1}})
	if got := sts(); got == uid {
		t.Errorf("apply with the word did not replace the StatefulSet (uid %s)", got)
	}
}

// A ResourceQuota refuses a helm step's object (#39 point 5): the plan
// says fail with the sentence apply fails with, not install.
func TestHelmPlanFailsOnQuota(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	// One ConfigMap of our own fills the quota whoever counts it.
	_, err := kc.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "occupant"}}, metav1.CreateOptions{})
	must(t, err)
	hard := corev1.ResourceList{"count/configmaps": resource.MustParse("1")}
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "one-configmap"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	quota, err = kc.Client.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{})
	must(t, err)
	// Quota admission refuses nothing until the quota has a status. The
	// controller's count can lag for minutes while CRDs come and go (it
	// pauses its workers until every resource's informer has synced), so
	// the test writes the count it would reach; a later count of its own
	// is at least as high (the occupant).
	quota.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{"count/configmaps": resource.MustParse("1")}}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		_, err := kc.Client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, quota, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			q, gerr := kc.Client.CoreV1().ResourceQuotas(ns).Get(ctx, quota.Name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			if used, ok := q.Status.Used["count/configmaps"]; ok && used.Value() >= 1 {
				return nil
			}
			quota.ResourceVersion = q.ResourceVersion
		}
		return err
	})
	must(t, err)
	file := chartSpec(t, ns, "    chart: "+repoRoot+"/test/testdata/charts/immutable\n")
	const why = "exceeded quota"
	p := planJSON(t, nil, file)
	if s := p.Steps[0]; s.Action != model.ActionFail || !strings.Contains(s.Reason, why) || !strings.Contains(s.Reason, "app-settings") {
		t.Errorf("plan: %s: %s (diff note %q); want fail naming app-settings and %q", s.Action, s.Reason, s.DiffNote, why)
	}
	out := khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: why}})
}

// A wait whose object goes says so at once (#39 point 4): a wait step on
// a ConfigMap that is being deleted (a finalizer holds it) fails the
// moment the finalizer is released and the object goes, saying it was
// deleted while khook waited, not at its two-minute time-out with
// "timed out".
func TestWaitOnAnObjectThatGoesSaysSoAtOnce(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	const hold = "khook.test/hold"
	cms := kc.Client.CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{hold}}}, metav1.CreateOptions{})
	must(t, err)
	must(t, cms.Delete(ctx, "held", metav1.DeleteOptions{}))
	release := func() error {
		_, err := cms.Patch(context.Background(), "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	t.Cleanup(func() { _ = release() })
	file := writeSpec(t, fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: wait-gone}
steps:
  - name: w
    timeout: 2m
    wait: {for: "jsonpath={.data.ready}=yes", on: configmap/held, namespace: %s}
`, ns))
	// Released only once the wait says it has seen the object being
	// deleted: its progress line names the object's state. A request the
	// wait sent proves nothing: a WATCH carries its initial state later,
	// and the object could go before the wait ever saw it ("nothing
	// matches yet" at the time-out).
	inv := invocation{Args: []string{"apply", "-f", file, "-o", "json"}}
	cmd, stdout, _ := command(t, inv)
	var stderr awaitline.Output
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	done := make(chan error, 1)
	go func() { err := cmd.Wait(); stderr.Close(); done <- err }()
	seen, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err = stderr.Await(seen, "step w: waiting: ", "configmap/held in namespace "+ns+" is being deleted", "held by finalizers "+hold)
	if err != nil {
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the wait never said it saw configmap/held being deleted: %v\nstderr:\n%s", err, stderr.String())
	}
	must(t, release())
	out := finish(t, inv, cmd, stdout, &stderr, <-done)
	expectSteps(t, out, []want{{Name: "w", Status: model.StatusFailed, Attempts: 1, Error: "configmap/held in namespace " + ns + " was deleted while khook waited"}})
	if out.Results != nil && len(out.Results.Steps) == 1 && strings.Contains(out.Results.Steps[0].Error, "timed out") {
		t.Errorf("the wait says it timed out: %s", out.Results.Steps[0].Error)
	}
}

// A fresh install (a release of its own) whose chart's crds/ CRD drops
// the version another release's objects are stored in is refused by plan
// and apply (#39 point 3: CRD change checks on every path that writes a
// CRD, install included), and the CRD stays as it was.
func TestCRDsInstallDroppingAStoredVersionIsRefused(t *testing.T) {
	ns, other := namespace(t), namespace(t)
	dropCRD(t, "gadgets.ver.e2e.khook.io")
	out := khook(t, invocation{Args: []string{"apply", "-f", chartSpec(t, other, "    chart: "+testdata("charts", "crdver-1")+"\n"), "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	before, err := dyn(t).Resource(crdGVR).Get(t.Context(), "gadgets.ver.e2e.khook.io", metav1.GetOptions{})
	must(t, err)

	file := chartSpec(t, ns, "    chart: "+testdata("charts", "crdver-2")+"\n")
	const why = "CRD gadgets.ver.e2e.khook.io: the update drops version v1alpha1, which status.storedVersions lists, with 1 Gadget object in 1 namespace stored"
	if p := planJSON(t, nil, file); p.Steps[0].Action != model.ActionFail || !strings.Contains(p.Steps[0].Reason, why) {
		t.Errorf("plan of the install: %s (%s), want fail: %s", p.Steps[0].Action, p.Steps[0].Reason, why)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: why}})
	after, err := dyn(t).Resource(crdGVR).Get(t.Context(), "gadgets.ver.e2e.khook.io", metav1.GetOptions{})
	must(t, err)
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("the refused install wrote the CRD: resourceVersion %s -> %s", before.GetResourceVersion(), after.GetResourceVersion())
	}
}
