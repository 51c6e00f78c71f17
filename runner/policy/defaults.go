package policy

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	appsdefaults "k8s.io/kubernetes/pkg/apis/apps/v1"
	autoscalingdefaults "k8s.io/kubernetes/pkg/apis/autoscaling/v2"
	batchdefaults "k8s.io/kubernetes/pkg/apis/batch/v1"
	coredefaults "k8s.io/kubernetes/pkg/apis/core/v1"
	networkingdefaults "k8s.io/kubernetes/pkg/apis/networking/v1"
	policydefaults "k8s.io/kubernetes/pkg/apis/policy/v1"
	rbacdefaults "k8s.io/kubernetes/pkg/apis/rbac/v1"
	storagedefaults "k8s.io/kubernetes/pkg/apis/storage/v1"
)

// serverDefaults holds the API server's own defaulting functions of the
// built-in kinds (k8s.io/kubernetes' generated defaulters), which it
// applies to every object before admission: an offline plan defaults a
// manifest with them, so a policy reads what the server's would (a
// Deployment without replicas has 1).
var serverDefaults = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, register := range []func(*runtime.Scheme) error{appsdefaults.RegisterDefaults, batchdefaults.RegisterDefaults,
		coredefaults.RegisterDefaults, networkingdefaults.RegisterDefaults, rbacdefaults.RegisterDefaults,
		autoscalingdefaults.RegisterDefaults, policydefaults.RegisterDefaults, storagedefaults.RegisterDefaults} {
		utilruntime.Must(register(s))
	}
	return s
}()

// defaultedGroups are the API groups whose kinds serverDefaults defaults.
var defaultedGroups = map[string]bool{"": true, "apps": true, "batch": true, "networking.k8s.io": true,
	"rbac.authorization.k8s.io": true, "autoscaling": true, "policy": true, "storage.k8s.io": true}

// withServerDefaults is u as the API server decodes and defaults it before
// admission: through its Go type (fields the type lacks dropped, as the
// server drops them) with the server's defaulting. False when u is not a
// built-in kind khook can default, or does not decode into its type (the
// server refuses such an object anyway).
func withServerDefaults(u *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	gvk := u.GroupVersionKind()
	if !defaultedGroups[gvk.Group] {
		return u, false
	}
	typed, err := scheme.Scheme.New(gvk)
	if err != nil {
		return u, false
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		return u, false
	}
	serverDefaults.Default(typed)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return u, false
	}
	out := &unstructured.Unstructured{Object: m}
	out.SetGroupVersionKind(gvk)
	return out, true
}
