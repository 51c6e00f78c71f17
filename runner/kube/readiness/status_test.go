package readiness

import (
	"strings"
	"testing"

	"github.com/khook/khook/model"
)

// A terminating CRD says what holds it; a stuck Deployment gives kstatus's
// message; the sentence names at most max objects, then how many more.
func TestWaitingForNamesStatusAndWhy(t *testing.T) {
	crd, ready := Status(yamlObj(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: frrnodestates.frrk8s.metallb.io
  deletionTimestamp: "2026-01-01T00:00:00Z"
  finalizers: [customresourcecleanup.apiextensions.k8s.io]
`))
	if ready {
		t.Error("a terminating CRD is Current")
	}
	deploy, ready := Status(yamlObj(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: controller, namespace: metallb, generation: 2}
spec: {replicas: 1}
status: {observedGeneration: 2, replicas: 2, updatedReplicas: 0, readyReplicas: 1, availableReplicas: 1}
`))
	if ready {
		t.Error("a Deployment with no updated replica is Current")
	}
	got := WaitingFor([]model.DiagnosedObject{crd, deploy}, 5)
	for _, want := range []string{
		"customresourcedefinition/frrnodestates.frrk8s.metallb.io (Terminating: held by finalizers customresourcecleanup.apiextensions.k8s.io)",
		", deployment/metallb/controller (InProgress: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("WaitingFor = %q, lacks %q", got, want)
		}
	}
	if got := WaitingFor([]model.DiagnosedObject{crd, deploy, deploy}, 1); !strings.HasSuffix(got, "), and 2 more") || strings.Contains(got, "deployment/") {
		t.Errorf("WaitingFor capped at 1 = %q, want the first and \"and 2 more\"", got)
	}
}
