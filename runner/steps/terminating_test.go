package steps

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/wait"
)

// hold is a finalizer no controller removes: the test decides when an
// object it holds goes.
const hold = "khook.test/hold"

// terminatingConfigMap makes ns/name (key=old) and deletes it while hold
// keeps it: it is terminating until release. It returns its UID.
func terminatingConfigMap(t *testing.T, ns, name string) types.UID {
	t.Helper()
	ctx := context.Background()
	cms := testCluster.Client.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{hold}}, Data: map[string]string{"key": "old"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release(context.Background(), ns, name) })
	return cm.UID
}

// release removes hold from ns/name: the terminating object goes.
func release(ctx context.Context, ns, name string) error {
	_, err := testCluster.Client.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// An apply onto an object being deleted (#39 point 4): the plan predicts
// the create and warns it is being deleted and what holds it; apply waits
// for it to go (the finalizer removed meanwhile) and creates it anew, a
// new UID with the manifest's data; an object that does not go within the
// step's timeout fails saying it is being deleted and by what, untouched.
func TestApplyOntoATerminatingObjectCreatesItAnew(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	x := NewApplyExecutor(env)
	st := applyStep(ns, configMap("settings", "new"))
	old := terminatingConfigMap(t, ns, "settings")

	var warned kube.Warnings
	p, err := x.Plan(kube.WithWarnings(deadline(t, time.Minute), &warned), st, runner.PlanInput{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if p.Action != model.ActionCreate || len(p.Objects) != 1 || p.Objects[0].Action != model.ActionCreate {
		t.Errorf("plan: %s %+v, want create", p.Action, p.Objects)
	}
	wantWarning := "configmap/settings in namespace " + ns + " is being deleted ("
	if !hasWarning(warned.List(), wantWarning, "held by finalizers "+hold, "apply waits for it to go, then creates it anew") {
		t.Errorf("plan warnings %+v, want one saying it is being deleted, by what, and what apply does", warned.List())
	}

	// Not released: the step's timeout ends the wait, saying what holds it.
	_, err = x.Execute(deadline(t, 2*time.Second), st)
	if err == nil || !strings.Contains(err.Error(), "it is being deleted and did not go") || !strings.Contains(err.Error(), hold) {
		t.Errorf("apply onto a held object: %v, want it to say it is being deleted and held by %s", err, hold)
	}
	cm, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "settings", metav1.GetOptions{})
	if err != nil || cm.UID != old || cm.Data["key"] != "old" || cm.DeletionTimestamp == nil {
		t.Fatalf("after the refused apply: %v uid %s (was %s) data %v, want the held object untouched", err, cm.UID, old, cm.Data)
	}

	// Released while apply waits: it creates the object anew.
	done := make(chan error, 1)
	go func() {
		_, err := x.Execute(deadline(t, time.Minute), st)
		done <- err
	}()
	if err := release(context.Background(), ns, "settings"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("apply once released: %v", err)
	}
	cm, err = testCluster.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "settings", metav1.GetOptions{})
	if err != nil || cm.UID == old || cm.Data["key"] != "new" || cm.DeletionTimestamp != nil {
		t.Errorf("after apply: %v uid %s (old %s) data %v deleting %v, want a new object with the manifest's data", err, cm.UID, old, cm.Data, cm.DeletionTimestamp)
	}
}

// The crds/ case of #39 point 4 through the apply path helm's crds/ take
// (kube.PlanApply, Send, WaitCRDEstablished): a CRD still terminating is
// awaited gone, created anew and Established; the Established wait on a
// CRD being deleted fails at once saying what holds it.
func TestApplyOntoATerminatingCRD(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	group := groupFor(ns)
	name := "widgets." + group
	dyn, err := dynamic.NewForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	ctx := deadline(t, 2*time.Minute)
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(crd(group)), &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetFinalizers([]string{hold})
	first, err := crds.Create(ctx, &obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unhold := func() { // the server's own finalizer stays
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			live, err := crds.Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			var keep []string
			for _, f := range live.GetFinalizers() {
				if f != hold {
					keep = append(keep, f)
				}
			}
			live.SetFinalizers(keep)
			_, err = crds.Update(context.Background(), live, metav1.UpdateOptions{})
			return err
		})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	err = c.WaitCRDEstablished(ctx, name)
	if err == nil || !strings.Contains(err.Error(), "is being deleted") || !strings.Contains(err.Error(), hold) || strings.Contains(err.Error(), "timed out") {
		t.Errorf("Established wait on a terminating CRD: %v, want at once that it is being deleted, held by %s", err, hold)
	}

	env, _ := newTestEnv(t)
	x := NewApplyExecutor(env)
	st := applyStep(ns, crd(group))
	done := make(chan error, 1)
	go func() {
		_, err := x.Execute(deadline(t, time.Minute), st)
		done <- err
	}()
	unhold()
	if err := <-done; err != nil {
		t.Fatalf("apply of the CRD once released: %v", err)
	}
	now, err := crds.Get(ctx, name, metav1.GetOptions{})
	if err != nil || now.GetUID() == first.GetUID() || now.GetDeletionTimestamp() != nil {
		t.Fatalf("after apply: %v, uid %s (was %s), want the CRD created anew", err, now.GetUID(), first.GetUID())
	}
	if err := c.WaitCRDEstablished(ctx, name); err != nil {
		t.Errorf("the new CRD: %v", err)
	}
}

// A wait whose named object goes says so at once (#39 point 4), not when
// its timeout ends.
func TestWaitOnAnObjectThatGoesSaysSoAtOnce(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	cms := testCluster.Client.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "awaited"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	mapping, err := c.MappingFor(context.Background(), schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	var once bool
	ctx := deadline(t, 10*time.Minute) // far beyond the test's own run: a time-out would show
	done := make(chan error, 1)
	go func() {
		done <- wait.For(ctx, c, wait.Target{Mapping: mapping, Namespace: ns, Name: "awaited"}, "condition=Never", func(objs []*unstructured.Unstructured) (bool, string, error) {
			if len(objs) == 1 && !once {
				once = true
				close(seen)
			}
			return false, "not yet", nil
		})
	}()
	<-seen
	if err := cms.Delete(context.Background(), "awaited", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "configmap/awaited in namespace "+ns+" was deleted while khook waited for condition=Never") {
		t.Errorf("wait on a deleted object: %v, want it to say the object was deleted", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the wait ran to its deadline")
	}
}

func hasWarning(ws []kube.Warning, parts ...string) bool {
	for _, w := range ws {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w.Object+" "+w.Message, p)
		}
		if all {
			return true
		}
	}
	return false
}
