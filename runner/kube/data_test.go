package kube

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/spec"
)

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// What holds data is what only an explicit word deletes or replaces.
func TestHoldsDataAndRecreates(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		holds     bool
		recreates bool // with the step's onImmutable: recreate
	}{
		{"claim", "{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: d}}", true, false},
		{"volume", "{apiVersion: v1, kind: PersistentVolume, metadata: {name: d}}", true, false},
		{"statefulset deleting its claims", "{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db}, spec: {persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete}}}", true, false},
		{"statefulset retaining its claims", "{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db}, spec: {persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain}}}", false, true},
		{"statefulset by default", "{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db}}", false, true},
		{"annotated claim", "{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: d, annotations: {khook.io/on-immutable: recreate}}}", true, true},
		{"annotated statefulset", "{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, annotations: {khook.io/on-immutable: recreate}}, spec: {persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete}}}", true, true},
		{"deployment", "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}}", false, true},
		{"a claim-named kind of another group", "{apiVersion: example.com/v1, kind: PersistentVolumeClaim, metadata: {name: d}}", false, true},
	} {
		obj := object(t, c.doc)
		if got := HoldsData(obj); got != c.holds {
			t.Errorf("%s: HoldsData = %v, want %v", c.name, got, c.holds)
		}
		if got := Recreates(obj, spec.OnImmutableRecreate); got != c.recreates {
			t.Errorf("%s: Recreates = %v, want %v", c.name, got, c.recreates)
		}
	}
}

func TestLosesAddress(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"{apiVersion: v1, kind: Service, metadata: {name: lb}, spec: {type: LoadBalancer}, status: {loadBalancer: {ingress: [{ip: 203.0.113.7}, {hostname: lb.example.com}]}}}",
			"it loses its load balancer address 203.0.113.7, lb.example.com (a new one is assigned)"},
		{"{apiVersion: v1, kind: Service, metadata: {name: lb}, spec: {type: LoadBalancer}}", "it loses its load balancer (no address assigned yet)"},
		{"{apiVersion: v1, kind: Service, metadata: {name: web}, spec: {type: ClusterIP}}", ""},
		{"{apiVersion: v1, kind: ConfigMap, metadata: {name: web}}", ""},
	} {
		if got := LosesAddress(object(t, c.doc)); got != c.want {
			t.Errorf("LosesAddress(%s) = %q, want %q", c.doc, got, c.want)
		}
	}
}

func TestBeingDeletedSaysSinceWhenAndWhatHoldsIt(t *testing.T) {
	obj := object(t, "{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: widgets.example.com, finalizers: [customresourcecleanup.apiextensions.k8s.io]}}")
	ts := metav1.NewTime(time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC))
	obj.SetDeletionTimestamp(&ts)
	got := BeingDeleted(obj)
	want := "customresourcedefinition.apiextensions.k8s.io/widgets.example.com is being deleted (since 2026-11-27T03:00:00Z, held by finalizers customresourcecleanup.apiextensions.k8s.io)"
	if got != want {
		t.Errorf("BeingDeleted = %q\nwant %q", got, want)
	}
	obj.SetFinalizers(nil)
	if got := BeingDeleted(obj); strings.Contains(got, "held by") {
		t.Errorf("without finalizers: %q", got)
	}
}

// A Service's clusterIP refuses a change as "may not change once set":
// an immutable field, which onImmutable: recreate replaces.
func TestImmutableFieldOfAServiceClusterIP(t *testing.T) {
	err := apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "front", field.ErrorList{
		field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), []string{"10.96.1.11"}, "may not change once set"),
	})
	if got := ImmutableField(err); got != "spec.clusterIPs[0]" {
		t.Errorf("ImmutableField = %q, want spec.clusterIPs[0]", got)
	}
}

// A StatefulSet's spec refuses a change to its claim templates (or
// selector) as forbidden: an immutable field too.
func TestImmutableFieldOfAStatefulSetSpec(t *testing.T) {
	err := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, "db", field.ErrorList{
		field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"),
	})
	if got := ImmutableField(err); got != "spec" {
		t.Errorf("ImmutableField = %q, want spec", got)
	}
}
