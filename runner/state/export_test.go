package state

import "github.com/khook/khook/test/cluster"

// SharedCluster hands the package's cluster to the external tests.
func SharedCluster() *cluster.Cluster { return kube }
