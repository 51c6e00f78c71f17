package kube

import (
	"context"
	"errors"
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
	err := waitGone(ctx, c, []Deleted{{Mapping: m, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}})
	InvalidateLiveOf(ctx, m, obj.GetNamespace())
	if err != nil {
		return fmt.Errorf("cannot apply %s: it is being deleted and did not go (%w); remove what holds it or wait, then apply again", ObjectName(obj), err)
	}
	return nil
}

// GoneFunc waits, by watch and within ctx, until no object with each
// Deleted's UID remains.
type GoneFunc func(ctx context.Context, c *Clients, deleted []Deleted) error

// awaitDeletion is runner/kube/wait's Gone. The waits import this package,
// so they hand their deletion wait in when they are linked (SetGone, from
// their init) for Send and Replace, rather than this package importing them.
var awaitDeletion GoneFunc

// SetGone is for runner/kube/wait's init alone.
func SetGone(f GoneFunc) { awaitDeletion = f }

func waitGone(ctx context.Context, c *Clients, deleted []Deleted) error {
	if awaitDeletion == nil {
		return errors.New("cannot wait for a deleted object to go: this program does not link runner/kube/wait (import it)")
	}
	return awaitDeletion(ctx, c, deleted)
}
