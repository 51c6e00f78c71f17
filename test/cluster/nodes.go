package cluster

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// The simulated nodes look like a small cloud cluster's: DefaultNodes nodes
// spread over two zones of one region, each with the well-known labels a
// kubelet and a cloud provider set, and the allocatable of a 4-CPU, 16 GiB
// machine. Anti-affinity, topology spread constraints, node selectors and
// resource requests then schedule as they would there.
const (
	DefaultNodes = 3
	Region       = "khook-region-1"
	InstanceType = "khook.standard-4"
)

// Zones are the nodes' zones: node i is in Zones[i%len(Zones)].
var Zones = []string{"khook-region-1a", "khook-region-1b"}

// NodeAllocatable is what each node offers the scheduler.
var NodeAllocatable = corev1.ResourceList{
	corev1.ResourceCPU:              resource.MustParse("4"),
	corev1.ResourceMemory:           resource.MustParse("16Gi"),
	corev1.ResourcePods:             resource.MustParse("110"),
	corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
}

// NodeName returns the name of node i (kwok-node-0, kwok-node-1, ...).
func NodeName(i int) string { return "kwok-node-" + strconv.Itoa(i) }

// newNode is node i as kwok manages it (selected by annotation).
func newNode(i int) *corev1.Node {
	name := NodeName(i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				"kwok.x-k8s.io/node":           "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				corev1.LabelHostname:           name,
				corev1.LabelOSStable:           "linux",
				corev1.LabelArchStable:         "amd64",
				corev1.LabelTopologyZone:       Zones[i%len(Zones)],
				corev1.LabelTopologyRegion:     Region,
				corev1.LabelInstanceTypeStable: InstanceType,
				"type":                         "kwok",
			},
		},
		// kwok's node-initialize stage keeps a status it finds; the API
		// server keeps the status of a created node (kubelets register so).
		Status: corev1.NodeStatus{Capacity: NodeAllocatable, Allocatable: NodeAllocatable},
	}
}

// createNodes registers the cluster's nodes.
func (c *Cluster) createNodes(ctx context.Context) error {
	for i := range c.nodes {
		node := newNode(i)
		_, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("khook test cluster: cannot create node %s: %w", node.Name, err)
		}
	}
	return nil
}

// waitNodesReady waits until kwok reports every node Ready and the node
// lifecycle controller has lifted its not-ready taint (until then the
// scheduler places no pod there).
func (c *Cluster) waitNodesReady(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, c.nodes)
	for i := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.waitNodeReady(ctx, NodeName(i))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) waitNodeReady(ctx context.Context, name string) error {
	lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(), "nodes", "", fields.OneTermEqualSelector("metadata.name", name))
	err := until(ctx, lw, &corev1.Node{}, func(obj runtime.Object) bool {
		node := obj.(*corev1.Node)
		for _, t := range node.Spec.Taints {
			if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
				return false
			}
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue
			}
		}
		return false
	})
	if err != nil {
		return startErr(ctx, err, "node "+name+" to be Ready and untainted")
	}
	return nil
}
