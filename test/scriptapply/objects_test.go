package scriptapply

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/test/cluster"
)

// key names an object as a difference sentence does: Kind namespace/name.
type key struct{ Kind, Namespace, Name string }

func (k key) String() string {
	if k.Namespace == "" {
		return k.Kind + " " + k.Name
	}
	return k.Kind + " " + k.Namespace + "/" + k.Name
}

// made by the cluster, not by a script or khook: a controller's (events,
// leases, endpoints), a Service's allocated ClusterIP (IPAddress, named by
// the address), or what every new namespace gets, which may or may not
// exist yet when the script ends.
var skipKinds = []string{"Event", "Lease", "Endpoints", "EndpointSlice", "IPAddress", "ComponentStatus"}

func skipped(k key) bool {
	return slices.Contains(skipKinds, k.Kind) ||
		k.Kind == "ServiceAccount" && k.Name == "default" ||
		k.Kind == "ConfigMap" && k.Name == "kube-root-ca.crt"
}

// snapshot lists every object of every listable resource, normalised
// (normalise); objects a controller owns (pods, replica sets) are left out:
// they follow from their owner, which is compared.
func snapshot(t *testing.T, c *cluster.Cluster) map[key]map[string]any {
	t.Helper()
	ctx := context.Background()
	rc := rest.CopyConfig(c.RESTConfig)
	rc.WarningHandler = rest.NoWarnings{} // deprecated APIs listed, not used
	disco, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		t.Fatalf("Cannot make a discovery client: %v.", err)
	}
	lists, err := disco.ServerPreferredResources()
	// An aggregated API nobody serves (the egress proxy refuses it) is no
	// object of a script's.
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		t.Fatalf("Cannot discover the cluster's resources: %v.", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatalf("Cannot make a dynamic client: %v.", err)
	}
	objs := map[key]map[string]any{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatalf("Discovery named group version %q, which does not parse: %v.", l.GroupVersion, err)
		}
		for _, r := range l.APIResources {
			if !slices.Contains(r.Verbs, "list") || strings.Contains(r.Name, "/") || slices.Contains(skipKinds, r.Kind) {
				continue
			}
			list, err := dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			if err != nil {
				var status interface{ Status() metav1.Status }
				if errors.As(err, &status) && status.Status().Code == 404 {
					continue // a CRD removed while listing
				}
				t.Fatalf("Cannot list %s: %v.", r.Name, err)
			}
			for _, o := range list.Items {
				k := key{r.Kind, o.GetNamespace(), o.GetName()}
				if skipped(k) || metav1.GetControllerOf(&o) != nil || isKhookRecord(&o) {
					continue
				}
				objs[k] = normalise(o.Object)
			}
		}
	}
	return objs
}

// isKhookRecord: khook's state record, its own bookkeeping (runner/state).
func isKhookRecord(o *unstructured.Unstructured) bool {
	_, ok := o.GetLabels()["khook.io/spec"]
	return o.GetKind() == "Secret" && ok
}

// made returns the objects of after that before lacks or that changed.
func made(before, after map[key]map[string]any) map[key]map[string]any {
	out := map[key]map[string]any{}
	for k, o := range after {
		if b, ok := before[k]; !ok || !reflect.DeepEqual(b, o) {
			out[k] = o
		}
	}
	return out
}

// normalise drops what the server sets or what differs by the moment of
// creation: status, identity and bookkeeping metadata, allocated cluster
// IPs, Helm's release timestamps; every other field is compared.
func normalise(o map[string]any) map[string]any {
	delete(o, "status")
	md, _ := o["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"} {
		delete(md, f)
	}
	if a, ok := md["annotations"].(map[string]any); ok {
		// kubectl apply's record of what it applied, and a controller's count.
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		delete(a, "deployment.kubernetes.io/revision")
		if len(a) == 0 {
			delete(md, "annotations")
		}
	}
	if spec, ok := o["spec"].(map[string]any); ok && o["kind"] == "Service" {
		delete(spec, "clusterIP")
		delete(spec, "clusterIPs")
	}
	if spec, ok := o["spec"].(map[string]any); ok && o["kind"] == "Pod" {
		// The service account token's volume, named at random by the
		// admission that adds it to every pod.
		spec["volumes"] = withoutTokenVolume(spec["volumes"])
		for _, c := range spec["containers"].([]any) {
			c := c.(map[string]any)
			c["volumeMounts"] = withoutTokenVolume(c["volumeMounts"])
		}
	}
	if o["kind"] == "Secret" && o["type"] == "helm.sh/release.v1" {
		// The release's record: its timestamps differ; the objects it
		// made are compared themselves.
		delete(o, "data")
		if l, ok := md["labels"].(map[string]any); ok {
			delete(l, "modifiedAt")
			delete(l, "createdAt")
		}
	}
	return o
}

// withoutTokenVolume is a pod's volumes or mounts without the
// kube-api-access-* one.
func withoutTokenVolume(v any) any {
	l, _ := v.([]any)
	return slices.DeleteFunc(slices.Clone(l), func(e any) bool {
		name, _ := e.(map[string]any)["name"].(string)
		return strings.HasPrefix(name, "kube-api-access-")
	})
}

// differences says in one sentence per object how the objects the script
// made differ from those khook's apply made.
func differences(script, khook map[key]map[string]any) []string {
	var out []string
	for k, s := range script {
		kh, ok := khook[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s was made by the script, not by khook's apply.", k))
		case !reflect.DeepEqual(s, kh):
			var paths []string
			diffPaths("", s, kh, &paths)
			out = append(out, fmt.Sprintf("%s differs at %s.", k, strings.Join(paths, ", ")))
		}
	}
	for k := range khook {
		if _, ok := script[k]; !ok {
			out = append(out, fmt.Sprintf("%s was made by khook's apply, not by the script.", k))
		}
	}
	sort.Strings(out)
	return out
}

// keys lists the objects of a snapshot, sorted, for the log.
func keys(objs map[key]map[string]any) string {
	var out []string
	for k := range objs {
		out = append(out, k.String())
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// diffPaths collects the paths where a and b differ, with both values of a
// leaf.
func diffPaths(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diffPaths(strings.TrimPrefix(path+"."+k, "."), am[k], bm[k], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fmt.Sprintf("%s (script %s, khook %s)", path, show(a), show(b)))
	}
}

func show(v any) string {
	if v == nil {
		return "unset"
	}
	s := fmt.Sprintf("%v", v)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
