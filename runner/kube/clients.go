// Package kube holds what every Kubernetes-facing executor shares: clients,
// kubectl-style resource arguments, manifest sources and watch-driven waits.
package kube

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Clients is the set of clients one run uses, built once from the kubeconfig.
type Clients struct {
	// Kubeconfig and Context are what the user passed (Kubeconfig may be
	// empty: KUBECONFIG, then in-cluster). Helm builds its own getter from them.
	Kubeconfig string
	Context    string
	Namespace  string // the kubeconfig context's namespace, else "default"

	Config    *rest.Config
	Typed     kubernetes.Interface
	Dynamic   dynamic.Interface
	Discovery discovery.CachedDiscoveryInterface
	// Mapper resolves kinds and resources; Reset it after a discovery miss
	// (a CRD an earlier step registered).
	Mapper meta.ResettableRESTMapper
}
