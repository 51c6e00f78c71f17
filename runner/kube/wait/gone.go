package wait

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/runner/kube"
)

// The core's Send and Replace wait for an object to go with Gone.
func init() { kube.SetGone(Gone) }

// Gone watches each deleted object until no object with its UID remains
// (finalizers and graceful termination can take a while), bounded by ctx.
func Gone(ctx context.Context, c *kube.Clients, deleted []kube.Deleted) error {
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
		if err := For(ctx, c, t, "deletion", gone); err != nil {
			return err
		}
	}
	return nil
}
