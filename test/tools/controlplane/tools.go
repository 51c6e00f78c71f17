//go:build tools

// Package tools pins the control-plane commands that the khook test cluster
// builds (test/clusterbin), and the kubectl of the same Kubernetes; it is
// never compiled into khook itself. etcd and kwok share this module with
// Kubernetes so that one version of each common dependency (client-go, grpc,
// otel…) is chosen for all five: their builds then reuse the packages the
// kube-apiserver build compiled (kwok and etcd alone needed 881 packages the
// Kubernetes commands do not build; together, 260).
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
