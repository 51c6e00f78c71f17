package apiproxy

import (
	"net/http/httptest"
	"testing"
)

func TestVerb(t *testing.T) {
	for _, c := range []struct {
		method, target, verb string
		discovery            bool
	}{
		{"GET", "/api", "GET", true},
		{"GET", "/api/v1", "GET", true},
		{"GET", "/apis", "GET", true},
		{"GET", "/apis/apps/v1", "GET", true},
		{"GET", "/openapi/v3/apis/apps/v1?hash=x", "GET", true},
		{"GET", "/version", "GET", true},
		{"GET", "/api/v1/namespaces", "LIST", false},
		{"GET", "/api/v1/namespaces/demo", "GET", false},
		{"GET", "/api/v1/namespaces/demo/configmaps", "LIST", false},
		{"GET", "/api/v1/namespaces/demo/configmaps/a", "GET", false},
		{"GET", "/api/v1/namespaces/demo/pods/a/log", "GET", false},
		{"GET", "/apis/apps/v1/namespaces/demo/deployments?watch=true&resourceVersion=1", "WATCH", false},
		{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "LIST", false},
		{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/a.b.c", "GET", false},
		{"GET", "/api/v1/watch/namespaces/demo/pods", "WATCH", false},
		{"PATCH", "/api/v1/namespaces/demo/configmaps/a?dryRun=All", "PATCH", false},
		{"DELETE", "/apis/batch/v1/namespaces/demo/jobs/x", "DELETE", false},
	} {
		verb, discovery := Verb(httptest.NewRequest(c.method, c.target, nil))
		if verb != c.verb || discovery != c.discovery {
			t.Errorf("Verb(%s %s) = %s, %t; want %s, %t", c.method, c.target, verb, discovery, c.verb, c.discovery)
		}
	}
}
