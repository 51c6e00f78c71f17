package helmstep

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/khook/khook/runner/kube"
)

// dryRunApply is Helm's forced server-side apply of one rendered object as
// a dry run, with strict field validation (metav1.ApplyOptions cannot ask
// for it, so the apply patch is sent as the patch it is).
func dryRunApply(ctx context.Context, ri dynamic.ResourceInterface, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	body, err := desired.MarshalJSON()
	if err != nil {
		return nil, err
	}
	force := true
	return ri.Patch(ctx, desired.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager: FieldManager, FieldValidation: kube.FieldValidation, Force: &force, DryRun: []string{metav1.DryRunAll},
	})
}
