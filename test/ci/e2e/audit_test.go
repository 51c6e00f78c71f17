package e2e

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/test/cluster"
)

// secretReadsByKhook returns khook's reads (get, list, watch) of Secrets in
// namespace ns, or across namespaces, received from since on, from the
// harness's audit log; khook's requests are those with its User-Agent
// (kube.UserAgent). storage are Helm's release storage reads, which
// lookup-secrets: deny lets through: a LIST selecting owner=helm and a GET
// of a release record (sh.helm.release.v1.*); others are the rest. ok is
// false when the cluster has no audit log at hand (a connected cluster).
func secretReadsByKhook(t *testing.T, ns string, since time.Time) (storage, others []cluster.AuditEvent, ok bool) {
	t.Helper()
	evs, err := kube.AuditEvents(func(ev cluster.AuditEvent) bool {
		return ev.Resource == "secrets" && (ev.Namespace == ns || ev.Namespace == "") &&
			(ev.Verb == "get" || ev.Verb == "list" || ev.Verb == "watch") &&
			strings.HasPrefix(ev.UserAgent, "khook") && !ev.Time.Before(since)
	})
	if errors.Is(err, cluster.ErrNoAuditLog) {
		return nil, nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if helmStorageRead(ev) {
			storage = append(storage, ev)
		} else {
			others = append(others, ev)
		}
	}
	return storage, others, true
}

func helmStorageRead(ev cluster.AuditEvent) bool {
	if ev.Verb == "get" {
		return strings.HasPrefix(ev.Name, "sh.helm.release.v1.")
	}
	u, err := url.Parse(ev.RequestURI)
	if err != nil || ev.Name != "" {
		return false
	}
	for _, term := range strings.Split(u.Query().Get("labelSelector"), ",") {
		if strings.TrimSpace(term) == "owner=helm" {
			return true
		}
	}
	return false
}
