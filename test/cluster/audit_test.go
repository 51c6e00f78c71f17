package cluster_test

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/test/cluster"
)

// TestAuditLogNamesSecretReads: a read of a Secret is in the audit log,
// with its verb, namespace, name and the client's User-Agent, as soon as
// the client has its answer; other resources are not audited.
func TestAuditLogNamesSecretReads(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	cfg := rest.CopyConfig(kube.RESTConfig)
	cfg.UserAgent = "audit-probe/1"
	client := kubernetes.NewForConfigOrDie(cfg)
	start := time.Now().Add(-time.Second)
	ctx := t.Context()
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets(ns).Get(ctx, "probe", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	evs, err := kube.AuditEvents(func(ev cluster.AuditEvent) bool {
		return ev.UserAgent == "audit-probe/1" && ev.Namespace == ns && !ev.Time.Before(start)
	})
	if errors.Is(err, cluster.ErrNoAuditLog) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Verb+" "+ev.Resource+" "+ev.Name)
		if ev.User != "khook-admin" {
			t.Errorf("event %+v: user %q, want khook-admin", ev, ev.User)
		}
	}
	want := []string{"create secrets ", "get secrets probe", "list secrets "}
	if len(got) != len(want) {
		t.Fatalf("audited %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %q, want %q", i, got[i], want[i])
		}
	}
	if evs[2].RequestURI != "/api/v1/namespaces/"+ns+"/secrets?labelSelector=owner%3Dhelm" {
		t.Errorf("the list's request URI is %q", evs[2].RequestURI)
	}
}
