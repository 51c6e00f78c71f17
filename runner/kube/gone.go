package kube

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Deleted is one object sent a delete, remembered by UID: an object of the
// same name created meanwhile is another object, and does not hold the wait
// (a pod a ReplicaSet recreates; an aggregated ClusterRole that the
// clusterrole-aggregation controller re-applies, and so re-creates, right
// after a Helm uninstall deleted it).
type Deleted struct {
	Mapping   *meta.RESTMapping
	Namespace string
	Name      string
	UID       types.UID
}

// WaitGone watches each deleted object until no object with its UID remains
// (finalizers and graceful termination can take a while), bounded by ctx.
func WaitGone(ctx context.Context, c *Clients, deleted []Deleted) error {
	for _, d := range deleted {
		t := Target{Mapping: d.Mapping, Namespace: d.Namespace, Name: d.Name}
		uid := d.UID
		gone := func(objs []*unstructured.Unstructured) (bool, string, error) {
			for _, o := range objs {
				if o.GetUID() == uid {
					if ts := o.GetDeletionTimestamp(); ts != nil && len(o.GetFinalizers()) > 0 {
						return false, fmt.Sprintf("still terminating, finalizers %v", o.GetFinalizers()), nil
					}
					return false, "still terminating", nil
				}
			}
			return true, "", nil
		}
		if err := WaitFor(ctx, c, t, "deletion", gone); err != nil {
			return err
		}
	}
	return nil
}
