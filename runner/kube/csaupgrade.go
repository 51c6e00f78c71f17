package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
)

// KubectlClientSideManager is the field manager kubectl apply (client-side)
// writes with, as an Update operation.
const KubectlClientSideManager = "kubectl-client-side-apply"

// clientSideManagers are the Update managers of client-side apply whose
// fields a server-side apply manager takes over: kubectl's and khook's own
// client-side writes (an apply step that turned serverSide: true).
var clientSideManagers = sets.New(KubectlClientSideManager, FieldManager)

// UpgradeClientSide hands the fields that client-side apply owns on live
// (kubectl's, or khook's own client-side writes) to the server-side apply
// manager ssaManager, as kubectl apply --server-side does
// (k8s.io/client-go/util/csaupgrade). Without it those Update managers keep
// owning every field they ever set, so a field later removed from the
// manifest stays on the object forever. It reports whether it wrote; a
// live object with nothing to migrate is left alone. The write is a JSON
// patch guarded by live's resourceVersion.
func (c *Clients) UpgradeClientSide(ctx context.Context, m *meta.RESTMapping, live *unstructured.Unstructured, ssaManager string) (bool, error) {
	if live == nil || !hasClientSideManager(live.GetManagedFields()) {
		return false, nil
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, clientSideManagers, ssaManager)
	if err != nil {
		return false, fmt.Errorf("cannot migrate the client-side field managers of %s to server-side apply: %v", ObjectName(live), err)
	}
	if patch == nil {
		return false, nil
	}
	r := c.resourceFor(m, live.GetNamespace())
	_, err = r.Patch(ctx, live.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
	if apierrors.IsConflict(err) { // live was read earlier in the run: migrate what is there now
		fresh, gerr := r.Get(ctx, live.GetName(), metav1.GetOptions{})
		if gerr != nil {
			return false, fmt.Errorf("cannot read %s: %w", ObjectName(live), c.Explain(gerr))
		}
		InvalidateLiveOf(ctx, m, live.GetNamespace())
		return c.UpgradeClientSide(ctx, m, fresh, ssaManager)
	}
	if err != nil {
		return false, fmt.Errorf("cannot migrate the client-side field managers of %s to server-side apply (%s): %w; re-run to retry", ObjectName(live), APIMessage(err), c.Explain(err))
	}
	InvalidateLiveOf(ctx, m, live.GetNamespace())
	return true, nil
}

func hasClientSideManager(fields []metav1.ManagedFieldsEntry) bool {
	for _, f := range fields {
		if f.Operation == metav1.ManagedFieldsOperationUpdate && clientSideManagers.Has(f.Manager) {
			return true
		}
	}
	return false
}
