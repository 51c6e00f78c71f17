package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// The API server's side of TestVAPConformance: its admission's verdict on
// an object is a dry-run create's answer, with the warnings it sends.

// verdict is one admission's answer to one object: deny, warn or admit by
// the policy under test, or refused (the server refuses the object for
// another reason: no verdict of the policy to compare).
type verdict struct {
	Effect  string
	Message string
}

const (
	verdictDeny    = "deny"
	verdictWarn    = "warn"
	verdictAdmit   = "admit"
	verdictRefused = "refused"
)

func (v verdict) String() string {
	if v.Message == "" {
		return v.Effect
	}
	return v.Effect + " (" + v.Message + ")"
}

// warnings collects the API server's warnings (HTTP 299) to one client's
// requests; the server side sends one request at a time.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(code int, _, text string) {
	if code == 299 && text != "" {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.msgs = append(w.msgs, text)
	}
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	msgs := w.msgs
	w.msgs = nil
	return msgs
}

// apiServer reaches the test cluster's admission: a dynamic client whose
// warnings are collected, and a mapper from kinds to resources that
// rediscovers when a kind is new (a CRD the test installed).
type apiServer struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	warned *warnings
}

func newAPIServer(t *testing.T) *apiServer {
	t.Helper()
	w := &warnings{}
	cfg := rest.CopyConfig(kc.RESTConfig)
	cfg.WarningHandler = w
	d, err := dynamic.NewForConfig(cfg)
	must(t, err)
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	must(t, err)
	return &apiServer{dyn: d, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)), warned: w}
}

// resource is obj's resource client: in ns when its kind is namespaced.
func (s *apiServer) resource(obj *unstructured.Unstructured, ns string) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		s.mapper.Reset() // a kind served since the last discovery
		m, err = s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("the test cluster does not serve %s: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return s.dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return s.dyn.Resource(m.Resource), nil
}

// admit is the server's verdict on creating obj in ns, by the policy
// named: a dry run through every admission plugin, nothing stored.
func (s *apiServer) admit(ctx context.Context, obj *unstructured.Unstructured, ns, policy string) (verdict, error) {
	ri, err := s.resource(obj, ns)
	if err != nil {
		return verdict{}, err
	}
	s.warned.take()
	_, err = ri.Create(ctx, obj.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return s.verdictOf(err, policy), nil
}

// verdictOf is a dry run's answer by the policy named: its denial, its
// warning, a refusal by anything else, or an admit.
func (s *apiServer) verdictOf(err error, policy string) verdict {
	byPolicy := "ValidatingAdmissionPolicy '" + policy + "'"
	switch {
	case err != nil && strings.Contains(err.Error(), byPolicy):
		return verdict{verdictDeny, err.Error()}
	case err != nil:
		return verdict{verdictRefused, err.Error()}
	}
	for _, w := range s.warned.take() {
		if strings.Contains(w, byPolicy) {
			return verdict{verdictWarn, w}
		}
	}
	return verdict{Effect: verdictAdmit}
}

// install creates the objects of a YAML file (a policy, its binding, its
// params) and, at the test's end, deletes them. An object left by an
// earlier run against the same cluster is replaced.
func (s *apiServer) install(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	objs := readObjects(t, file)
	for _, obj := range objs {
		ri, err := s.resource(obj, obj.GetNamespace()) // a param in a namespace
		must(t, err)
		err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := ri.Create(ctx, obj, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				err = ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
				return false, err
			}
			if apierrors.IsNotFound(err) {
				return false, nil // a CRD's kind not served yet
			}
			return err == nil, err
		})
		if err != nil {
			t.Fatalf("cannot install %s %s of %s in the test cluster: %v", obj.GetKind(), obj.GetName(), file, err)
		}
		t.Cleanup(func() {
			if err := ri.Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cannot delete %s %s of %s from the test cluster: %v", obj.GetKind(), obj.GetName(), file, err)
			}
		})
	}
	return objs
}

// installCRD installs a CRD file and awaits the CRD Established.
func (s *apiServer) installCRD(t *testing.T, file string) {
	t.Helper()
	for _, crd := range s.install(t, file) {
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := s.dyn.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
			return err == nil && crdEstablished(got), nil
		})
		if err != nil {
			t.Fatalf("CRD %s of %s is not Established after 30s: %v", crd.GetName(), file, err)
		}
	}
	s.mapper.Reset()
}

// awaitEnforcing awaits the server's admission cache (eventually
// consistent) holding the policy (enforcing true: some object is denied
// by it) or no longer holding it (false: none is). A denial because the
// server cannot yet configure the policy is neither: the server's
// admission resolves a paramKind whose CRD was just created only once its
// own discovery has caught up (seen on a busy machine: "failed to
// configure policy: failed to find resource referenced by paramKind"),
// and until then denies everything, whatever the policy says.
func (s *apiServer) awaitEnforcing(ctx context.Context, enforcing bool, policy, ns string, objs []*unstructured.Unstructured) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, obj := range objs {
			v, err := s.admit(ctx, obj, ns, policy)
			if err != nil {
				return false, err
			}
			if v.Effect == verdictDeny && strings.Contains(v.Message, "failed to configure policy") {
				return false, nil
			}
			if v.Effect == verdictDeny {
				return enforcing, nil
			}
		}
		return !enforcing, nil
	})
}

// readObjects decodes every YAML document of file.
func readObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	must(t, err)
	var objs []*unstructured.Unstructured
	for i, doc := range strings.Split(string(data), "\n---") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: document %d is not YAML: %v", file, i+1, err)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs
}
