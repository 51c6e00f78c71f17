package kube

import (
	"context"
	"github.com/khook/khook/spec"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// fakeClients serves a fixed discovery document: the mapping logic is pure
// given discovery, so it is tested here without a server.
func fakeClients() *Clients {
	disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", ShortNames: []string{"po"}, Verbs: []string{"get", "list"}},
			{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ShortNames: []string{"ns"}, Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "apiextensions.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "customresourcedefinitions", SingularName: "customresourcedefinition", Kind: "CustomResourceDefinition", ShortNames: []string{"crd"}, Verbs: []string{"get", "list"}},
		}},
	}}}
	cached := memory.NewMemCacheClient(disco)
	scheme := runtime.NewScheme()
	dyn := fake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{crdGVR: "CustomResourceDefinitionList"})
	return &Clients{Namespace: "default", Discovery: cached, Mapper: NewMapper(cached), Dynamic: dyn}
}

// resolveArg resolves a resource argument as the runner does: parsed by
// the spec's grammar, then mapped.
func resolveArg(c *Clients, arg string) (Resource, error) {
	r, err := spec.ParseResource(arg, false)
	if err != nil {
		return Resource{}, err
	}
	return c.ResolveResource(context.Background(), r)
}

func TestResolveResource(t *testing.T) {
	c := fakeClients()
	for arg, want := range map[string]string{
		"pods":                  "pods",
		"po":                    "pods",
		"Pod":                   "pods",
		"deployment/x":          "deployment.apps/x",
		"deploy/x":              "deployment.apps/x",
		"deployments.apps/x":    "deployment.apps/x",
		"deployment.apps/x":     "deployment.apps/x",
		"Deployment/x":          "deployment.apps/x",
		"Deployment.apps/x":     "deployment.apps/x",
		"deployments.v1.apps/x": "deployment.apps/x",
		"ns/kube-system":        "namespace/kube-system",
		"crd":                   "customresourcedefinitions.apiextensions.k8s.io",
	} {
		res, err := resolveArg(c, arg)
		if err != nil {
			t.Errorf("ResolveResource(%q): %v", arg, err)
			continue
		}
		if res.String() != want {
			t.Errorf("ResolveResource(%q) = %s, want %s", arg, res, want)
		}
	}
	res, _ := resolveArg(c, "ns/x")
	if res.Namespaced() {
		t.Error("namespaces must be cluster-scoped")
	}
	if res, _ := resolveArg(c, "po"); !res.Namespaced() {
		t.Error("pods must be namespaced")
	}
	_, err := resolveArg(c, "gizmos/x")
	if err == nil || !strings.Contains(err.Error(), `the server has no resource type "gizmos"`) {
		t.Errorf("unknown type: %v", err)
	}
}
