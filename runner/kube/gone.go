package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// BeingDeleted says that obj carries a deletion timestamp, since when and
// what holds it: "customresourcedefinition.apiextensions.k8s.io/widgets.example.com
// is being deleted (since 2026-11-27T03:00:00Z, held by finalizers
// customresourcecleanup.apiextensions.k8s.io)".
func BeingDeleted(obj *unstructured.Unstructured) string {
	s := ObjectName(obj) + " is being deleted"
	var held []string
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		held = append(held, "since "+ts.UTC().Format(time.RFC3339))
	}
	if f := obj.GetFinalizers(); len(f) > 0 {
		held = append(held, "held by finalizers "+strings.Join(f, ", "))
	}
	if len(held) > 0 {
		s += " (" + strings.Join(held, ", ") + ")"
	}
	return s
}

// awaitGone waits, by watch and within ctx (the step's timeout), for a
// terminating object to go; a timeout says it is still being deleted and
// what holds it.
func (c *Clients) awaitGone(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured) error {
	err := WaitGone(ctx, c, []Deleted{{Mapping: m, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}})
	InvalidateLiveOf(ctx, m, obj.GetNamespace())
	if err != nil {
		return fmt.Errorf("cannot apply %s: it is being deleted and did not go (%w); remove what holds it or wait, then apply again", ObjectName(obj), err)
	}
	return nil
}
