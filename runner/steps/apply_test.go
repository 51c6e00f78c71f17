package steps

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

func TestApplyCreatesThenSendsNothingWhenConverged(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	if err := os.WriteFile(filepath.Join(env.BaseDir, "svc.yaml"), []byte(`apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := applyStep(ns, configMap("settings", "one"), deployment("web", 2, nil))
	st.Apply.Manifests = append(st.Apply.Manifests, spec.Source{File: "svc.yaml"})
	x := NewApplyExecutor(env)

	out := run(t, x, st)
	if out.Detail != "created 3 objects" || out.Writes != 3 || writes.n.Load() != 3 {
		t.Errorf("first apply: detail %q, writes %d, counted %d; want created 3 objects, 3, 3", out.Detail, out.Writes, writes.n.Load())
	}

	writes.n.Store(0)
	out = run(t, x, st)
	if out.Detail != "unchanged 3 objects" || out.Writes != 0 || writes.n.Load() != 0 {
		t.Errorf("converged re-run: detail %q, writes %d, counted %d; want unchanged 3 objects and no write", out.Detail, out.Writes, writes.n.Load())
	}

	writes.n.Store(0)
	st.Apply.Manifests[0].Inline = configMap("settings", "two") + "\n---\n" + deployment("web", 2, nil)
	out = run(t, x, st)
	if out.Detail != "configured 1, unchanged 2 objects" || out.Writes != 1 || writes.n.Load() != 1 {
		t.Errorf("changed re-run: detail %q, writes %d, counted %d", out.Detail, out.Writes, writes.n.Load())
	}
	cm, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "settings", metav1.GetOptions{})
	if err != nil || cm.Data["key"] != "two" {
		t.Errorf("configmap after change: %v, %v", cm.Data, err)
	}
}

func TestApplyThreeWayKeepsOthersFieldsAndDropsRemovedOnes(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	x := NewApplyExecutor(env)
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\", b: \"2\"}\n"
	run(t, x, applyStep(ns, doc))
	// Someone else adds a key; khook's next apply drops b and must keep c.
	_, err := testCluster.Client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "cm", types.MergePatchType,
		[]byte(`{"data":{"c":"3"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run(t, x, applyStep(ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\"}\n"))
	cm, _ := testCluster.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "cm", metav1.GetOptions{})
	if cm.Data["a"] != "1" || cm.Data["c"] != "3" || cm.Data["b"] != "" {
		t.Errorf("data = %v, want a=1 and c=3 without b", cm.Data)
	}
}

func TestApplyServerSide(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	x := NewApplyExecutor(env)
	st := applyStep(ns, configMap("ssa", "one"))
	st.Apply.ServerSide = true
	if out := run(t, x, st); out.Detail != "created 1 object" || out.Writes != 1 {
		t.Errorf("first: %q, %d writes", out.Detail, out.Writes)
	}
	writes.n.Store(0)
	// Server-side apply always sends its request; the server keeps the object.
	if out := run(t, x, st); out.Detail != "unchanged 1 object" || out.Writes != 1 || writes.n.Load() != 1 {
		t.Errorf("re-run: %q, %d writes, %d counted", out.Detail, out.Writes, writes.n.Load())
	}
	// Another manager takes the field over: khook does not force.
	_, err := testCluster.Client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "ssa", types.ApplyPatchType,
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa"},"data":{"key":"theirs"}}`),
		metav1.PatchOptions{FieldManager: "other", Force: ptrTo(true)})
	if err != nil {
		t.Fatal(err)
	}
	st.Apply.Manifests[0].Inline = configMap("ssa", "mine")
	runErr(t, deadline(t, time.Minute), x, st, "server-side apply of configmap/ssa in namespace "+ns+" conflicts", `"other"`, ".data.key")
}

func ptrTo[T any](v T) *T { return &v }

func TestApplyCRDAndCustomResources(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	x := NewApplyExecutor(env)
	g1, g2 := groupFor(ns), "b."+groupFor(ns)
	t.Cleanup(func() {
		for _, g := range []string{g1, g2} {
			_ = testCluster.Client.Discovery().RESTClient().Delete().
				AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets." + g).Do(context.Background()).Error()
		}
	})
	// A CRD and its custom resource in one step.
	if out := run(t, x, applyStep(ns, crd(g1), widget(g1, "w1", "s"))); out.Detail != "created 2 objects" {
		t.Errorf("one step: %q", out.Detail)
	}
	// A CRD in one step and its custom resource right after, as the next
	// step would (same clients, so discovery is cached from before).
	run(t, x, applyStep(ns, crd(g2)))
	if out := run(t, x, applyStep(ns, widget(g2, "w2", "m"))); out.Detail != "created 1 object" {
		t.Errorf("next step: %q", out.Detail)
	}
	// Custom resources converge with a JSON merge patch.
	if out := run(t, x, applyStep(ns, widget(g2, "w2", "l"))); out.Detail != "configured 1 object" {
		t.Errorf("changed CR: %q", out.Detail)
	}
	if out := run(t, x, applyStep(ns, widget(g2, "w2", "l"))); out.Detail != "unchanged 1 object" || out.Writes != 0 {
		t.Errorf("converged CR: %q, %d writes", out.Detail, out.Writes)
	}
	// Short names from discovery resolve too (both CRDs share "wdg").
	res, err := env.Clients.ResolveResource(context.Background(), spec.Resource{Type: "wdg", Name: "w2"})
	if err != nil || res.Mapping.GroupVersionKind.Kind != "Widget" || res.Name != "w2" {
		t.Errorf("short name: %v, %v", res, err)
	}
}

func TestApplySkipIfExistsStillWaits(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	x := NewApplyExecutor(env)
	st := applyStep(ns, deployment("web", 1, nil))
	st.Apply.SkipIf, st.Apply.WaitFor = "exists", "condition=Available"
	out := run(t, x, st)
	if out.Skipped || out.Writes != 1 || out.Detail != "created 1 object; condition=Available met on 1 object" {
		t.Errorf("first: %+v", out)
	}
	writes.n.Store(0)
	st.Apply.Manifests[0].Inline = deployment("web", 3, nil) // skipIf ignores content
	out = run(t, x, st)
	if !out.Skipped || out.SkipReason != SkipReasonExists || out.Writes != 0 || writes.n.Load() != 0 {
		t.Errorf("second: %+v, %d counted", out, writes.n.Load())
	}
	if out.Detail != "condition=Available met on 1 object" {
		t.Errorf("second detail: %q", out.Detail)
	}
}

func TestApplyWaitForTimesOut(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	st := applyStep(ns, deployment("stuck", 1, neverReady))
	st.Apply.WaitFor = "condition=Available"
	st.Timeout = spec.Duration(3 * time.Second)
	runErr(t, deadline(t, 3*time.Second), NewApplyExecutor(env), st,
		"waitFor: timed out after 3s waiting for condition=Available on deployment.apps/stuck in "+ns+": 1 of 1 not ready: deployment/stuck (")
}

func TestApplyNamespaces(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	x := NewApplyExecutor(env)
	missing := ns + "-new"
	t.Cleanup(func() {
		_ = testCluster.Client.CoreV1().Namespaces().Delete(context.Background(), missing, metav1.DeleteOptions{})
	})
	runErr(t, deadline(t, time.Minute), x, applyStep(missing, configMap("a", "1")),
		"cannot apply configmap/a in namespace "+missing+": namespace \""+missing+"\" does not exist; create it in an earlier step or set createNamespace: true")
	// createNamespace creates only the step's namespace: for an object in
	// another missing namespace it is no advice, set or not.
	other := ns + "-other"
	elsewhere := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: " + other + "}\n"
	for _, create := range []bool{false, true} {
		st := applyStep(ns, elsewhere)
		st.Apply.CreateNamespace = create
		err := runErr(t, deadline(t, time.Minute), x, st,
			"cannot apply configmap/b in namespace "+other+": namespace \""+other+"\" does not exist; create it in an earlier step")
		if strings.Contains(err.Error(), "createNamespace") {
			t.Errorf("createNamespace: %v: the advice names createNamespace, which cannot create %s: %v", create, other, err)
		}
	}

	// The namespace createNamespace makes is one of the step's objects:
	// the plan predicts it, apply's detail and change set count it.
	st := applyStep(missing, configMap("a", "1"))
	st.Apply.CreateNamespace = true
	p, err := x.Plan(deadline(t, time.Minute), st, runner.PlanInput{})
	if err != nil {
		t.Fatal(err)
	}
	var planned []string
	for _, o := range p.Objects {
		planned = append(planned, fmt.Sprintf("%s %s %s", o.Action.Done(), o.Kind, nsName(o.Namespace, o.Name)))
	}
	want := []string{"created Namespace " + missing, "created ConfigMap " + missing + "/a"}
	if p.Action != model.ActionCreate || fmt.Sprint(planned) != fmt.Sprint(want) {
		t.Errorf("plan: %s %q, want create %q", p.Action, planned, want)
	}
	out := run(t, x, st)
	var did []string
	for _, c := range out.Changes {
		did = append(did, fmt.Sprintf("%s %s %s", c.Action, c.Kind, nsName(c.Namespace, c.Name)))
	}
	if out.Writes != 2 || out.Detail != "created 2 objects" || fmt.Sprint(did) != fmt.Sprint(want) {
		t.Errorf("createNamespace: %d writes, detail %q, changes %q; want 2 writes, created 2 objects, %q", out.Writes, out.Detail, did, want)
	}
	writes.n.Store(0)
	if out := run(t, x, st); out.Writes != 0 || writes.n.Load() != 0 {
		t.Errorf("createNamespace re-run: %d writes, %d counted", out.Writes, writes.n.Load())
	}

	// A cluster-scoped object written with a namespace is applied without one.
	name := ns + "-reader"
	t.Cleanup(func() {
		_ = testCluster.Client.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	run(t, x, applyStep(ns, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: "+name+", namespace: somewhere}\nrules: []\n"))
	if _, err := testCluster.Client.RbacV1().ClusterRoles().Get(context.Background(), name, metav1.GetOptions{}); err != nil {
		t.Errorf("cluster role: %v", err)
	}
}

func TestApplyRejectedObjectNamesIt(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	bad := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad}\nspec: {template: {spec: {containers: []}}}\n"
	runErr(t, deadline(t, time.Minute), NewApplyExecutor(env), applyStep(ns, bad), "the API server rejected deployment.apps/bad in namespace "+ns)
	runErr(t, deadline(t, time.Minute), NewApplyExecutor(env), applyStep(ns, "apiVersion: nope.example/v1\nkind: Thing\nmetadata: {name: x}\n"),
		"thing.nope.example/x", `does not know kind "Thing"`)
	_, err := testCluster.Client.AppsV1().Deployments(ns).Get(context.Background(), "bad", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("bad deployment exists: %v", err)
	}
}

func TestApplyKustomize(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	dir := filepath.Join(env.BaseDir, "overlay")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(configMap("k", "v")), 0o644)
	os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [cm.yaml]\nnameSuffix: -prod\n"), 0o644)
	st := &spec.Step{Name: "k", Apply: &spec.Apply{Namespace: ns, Manifests: []spec.Source{{Kustomize: "./overlay"}}}}
	if out := run(t, NewApplyExecutor(env), st); out.Detail != "created 1 object" {
		t.Errorf("detail %q", out.Detail)
	}
	if _, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "k-prod", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}

func TestApplyUnreachableClusterIsOneSentence(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, err := kube.NewClientsForConfig(&rest.Config{Host: "https://user:pw@" + addr})
	if err != nil {
		t.Fatal(err)
	}
	env := NewEnv(c, t.TempDir(), redact.New())
	err = runErr(t, deadline(t, time.Minute), NewApplyExecutor(env), applyStep("default", configMap("a", "1")),
		"cannot reach the API server at https://***@"+addr+": connection refused; check --kubeconfig/--context")
	if !kube.IsUnreachable(err) {
		t.Errorf("IsUnreachable(%v) = false", err)
	}
}
func TestStepActionFoldsObjects(t *testing.T) {
	cases := []struct {
		objs []model.Action
		want model.Action
	}{
		{nil, model.ActionUnchanged},
		{[]model.Action{"unchanged", "unchanged"}, model.ActionUnchanged},
		{[]model.Action{"unchanged", "create"}, model.ActionCreate},
		{[]model.Action{"create", "configure", "unchanged"}, model.ActionConfigure},
	}
	for _, c := range cases {
		if got := stepAction(c.objs); got != c.want {
			t.Errorf("stepAction(%v) = %s, want %s", c.objs, got, c.want)
		}
	}
}
