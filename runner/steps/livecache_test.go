package steps

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/kube"
)

// runCtx is one run's context: a step deadline and the run's live cache.
func runCtx(t testing.TB) context.Context {
	return kube.WithLiveCache(deadline(t, time.Minute))
}

func runIn(t *testing.T, ctx context.Context, x *ApplyExecutor, ns string, docs ...string) (string, int) {
	t.Helper()
	out, err := x.Execute(ctx, applyStep(ns, docs...))
	if err != nil {
		t.Fatal(err)
	}
	return out.Detail, out.Writes
}

// verbs counts a run's requests on configmaps by verb: "LIST", "GET",
// "POST", "PATCH".
func (l *requestLog) verbs(resource string) map[string]int {
	n := map[string]int{}
	for _, r := range l.all() {
		switch {
		case strings.HasSuffix(r.path, "/"+resource) && r.verb == http.MethodGet:
			n["LIST"]++
		case strings.Contains(r.path, "/"+resource):
			n[r.verb]++
		}
	}
	return n
}

func configMaps(n int, value string) []string {
	var docs []string
	for i := range n {
		docs = append(docs, configMap(fmt.Sprintf("c%02d", i), value))
	}
	return docs
}

// A converged apply reads each collection with one LIST (paged), not one
// GET per object, and sends nothing.
func TestApplyConvergedListsOnce(t *testing.T) {
	ns := testCluster.Namespace(t)
	env, log := newLoggedEnv(t)
	x := NewApplyExecutor(env)
	defer func(p int64) { kube.ListPageSize = p }(kube.ListPageSize)
	kube.ListPageSize = 5 // 12 objects: three pages
	fresh := runCtx(t)
	if d, w := runIn(t, fresh, x, ns, configMaps(12, "v")...); d != "created 12 objects" || w != 12 {
		t.Fatalf("fresh: %q, %d writes", d, w)
	}
	if n := log.verbs("configmaps"); n["GET"] != 0 || n["POST"] != 12 {
		t.Errorf("fresh run requests on configmaps: %v; want 12 POST and no GET", n)
	}
	log.reset()
	again := runCtx(t)
	if d, w := runIn(t, again, x, ns, configMaps(12, "v")...); d != "unchanged 12 objects" || w != 0 {
		t.Fatalf("converged: %q, %d writes", d, w)
	}
	if n := log.verbs("configmaps"); n["LIST"] != 3 || len(n) != 1 {
		t.Errorf("converged run requests on configmaps: %v; want only the 3 pages of one LIST", n)
	}
}

// Within one run, a read after khook's own write sees the write, and an
// object created behind the run's back after the LIST is applied over, not
// failed on.
func TestApplyLiveCacheWithinRun(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newLoggedEnv(t)
	x := NewApplyExecutor(env)
	ctx := runCtx(t)
	steps := []struct{ value, want string }{
		{"1", "created 1 object"}, {"2", "configured 1 object"}, {"2", "unchanged 1 object"},
	}
	for _, s := range steps {
		if d, _ := runIn(t, ctx, x, ns, configMap("own", s.value)); d != s.want {
			t.Errorf("value %s: %q, want %q", s.value, d, s.want)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "behind", Namespace: ns}, Data: map[string]string{"key": "x"}}
	if _, err := testCluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if d, _ := runIn(t, ctx, x, ns, configMap("behind", "y")); d != "configured 1 object" {
		t.Errorf("object created after the LIST: %q, want configured", d)
	}
	got, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(ctx, "behind", metav1.GetOptions{})
	if err != nil || got.Data["key"] != "y" {
		t.Errorf("behind: %v, %v", got.Data, err)
	}
}

// Where RBAC allows GET but not LIST, reads fall back to a GET per object.
func TestApplyLiveCacheListForbidden(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	ctx := runCtx(t)
	admin, _ := newTestEnv(t)
	if d, _ := runIn(t, ctx, NewApplyExecutor(admin), ns, configMap("c", "v")); d != "created 1 object" {
		t.Fatalf("setup: %q", d)
	}
	cfg := roleConfig(t, ns, []string{"get", "create", "patch"})
	var log requestLog
	c, err := kube.NewClientsForConfig(log.wrap(cfg))
	if err != nil {
		t.Fatal(err)
	}
	x := NewApplyExecutor(NewEnv(c, t.TempDir(), redact.New()))
	if d, w := runIn(t, runCtx(t), x, ns, configMap("c", "v")); d != "unchanged 1 object" || w != 0 {
		t.Errorf("converged without list: %q, %d writes", d, w)
	}
	if n := log.verbs("configmaps"); n["LIST"] != 1 || n["GET"] != 1 {
		t.Errorf("requests: %v; want the forbidden LIST, then one GET", n)
	}
}

// roleConfig is a client config for a service account of ns allowed only
// verbs on configmaps there.
func roleConfig(t *testing.T, ns string, verbs []string) *rest.Config {
	ctx := deadline(t, time.Minute)
	cs := testCluster.Client
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "limited"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "limited"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "limited"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "limited"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(testCluster.RESTConfig)
	cfg.BearerToken = tok.Status.Token
	// RBAC answers from its informers: await the binding taking effect.
	limited := kubernetes.NewForConfigOrDie(cfg)
	review := &authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authzv1.ResourceAttributes{Namespace: ns, Verb: verbs[0], Resource: "configmaps"}}}
	err = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		r, err := limited.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed, nil
	})
	if err != nil {
		t.Fatalf("the role binding never took effect: %v", err)
	}
	return cfg
}
