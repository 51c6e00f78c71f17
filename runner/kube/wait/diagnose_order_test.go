package wait

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A release's workloads come last in Helm's order; the diagnosis reads them
// first, so its bound on objects never cuts off the stuck Deployment.
func TestWorkloadsFirst(t *testing.T) {
	ref := func(group, kind, name string) ObjectRef {
		return ObjectRef{GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}, Namespace: "ns", Name: name}
	}
	var refs []ObjectRef
	for range 25 {
		refs = append(refs, ref("", "ConfigMap", "cm"))
	}
	refs = append(refs, ref("rbac.authorization.k8s.io", "ClusterRole", "cr"), ref("", "Service", "svc"),
		ref("apps", "DaemonSet", "agent"), ref("apps", "Deployment", "operator"), ref("", "PersistentVolumeClaim", "data"))
	got := workloadsFirst(refs)
	want := []string{"agent", "operator", "svc", "data", "cm"}
	for i, w := range want {
		if got[i].Name != w {
			t.Fatalf("order = %v..., want %v first", refNames(got[:5]), want)
		}
	}
	if got[len(got)-1].Name != "cr" || refs[0].Name != "cm" {
		t.Errorf("the rest keeps its order and refs is not changed: %v", refNames(got))
	}
}

func refNames(refs []ObjectRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Name)
	}
	return out
}
