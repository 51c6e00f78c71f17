package kube

import (
	"context"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// liveCache is the run-scoped read cache of converged-state checks (apply,
// plan, drift, Helm drift): the first read of an object of a (resource,
// namespace) LISTs that collection once, paginated, and later reads of it
// are answered from memory, so a converged run costs O(kinds × namespaces)
// requests, not O(objects). A LIST the RBAC forbids falls back to a GET per
// object. It lives in the run's context (WithLiveCache): a Clients reused
// across runs never answers from an older run. Correctness after writes:
// Send stores what the server answered (read after own write), deletes
// drop the object, and InvalidateLive drops everything after writes khook
// does not see object by object (Helm, jobs). A decision taken on a cached
// object that calls for a write is re-taken on a fresh GET first (see
// PlanApply), so writes never rest on a stale read.
type liveCache struct {
	mu      sync.Mutex
	entries map[liveKey]*liveEntry
}

type liveKey struct {
	gvr schema.GroupVersionResource
	ns  string
}

type liveEntry struct {
	mu        sync.Mutex
	loaded    bool
	perObject bool // LIST forbidden: GET each object
	objs      map[string]*unstructured.Unstructured
}

type liveCacheKey struct{}

// ListPageSize is the page size of collection reads (a variable: tests
// lower it to exercise paging).
var ListPageSize int64 = 500

// WithLiveCache returns a context whose reads of live objects go through a
// new run-scoped cache (one LIST per resource and namespace); the action
// layer calls it once per run. A context that has one keeps it.
func WithLiveCache(ctx context.Context) context.Context {
	if liveCacheOf(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, liveCacheKey{}, &liveCache{entries: map[liveKey]*liveEntry{}})
}

func liveCacheOf(ctx context.Context) *liveCache {
	lc, _ := ctx.Value(liveCacheKey{}).(*liveCache)
	return lc
}

// InvalidateLive drops every cached collection of the run: after writes
// khook cannot attribute to objects (a Helm install or upgrade, a job).
func InvalidateLive(ctx context.Context) {
	if lc := liveCacheOf(ctx); lc != nil {
		lc.mu.Lock()
		lc.entries = map[liveKey]*liveEntry{}
		lc.mu.Unlock()
	}
}

// Live reads one object as a GET would (a NotFound error when absent),
// from the run's cache when ctx carries one; cached tells which.
func (c *Clients) Live(ctx context.Context, m *meta.RESTMapping, ns, name string) (obj *unstructured.Unstructured, cached bool, err error) {
	if !namespacedMapping(m) {
		ns = ""
	}
	if lc := liveCacheOf(ctx); lc != nil {
		e := lc.entry(liveKey{m.Resource, ns})
		e.mu.Lock()
		defer e.mu.Unlock()
		if !e.loaded {
			c.load(ctx, m, ns, e)
		}
		if e.loaded && !e.perObject {
			if o, ok := e.objs[name]; ok {
				return o.DeepCopy(), true, nil
			}
			return nil, true, apierrors.NewNotFound(m.Resource.GroupResource(), name)
		}
	}
	obj, err = c.resourceFor(m, ns).Get(ctx, name, metav1.GetOptions{})
	return obj, false, err
}

func (lc *liveCache) entry(k liveKey) *liveEntry {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	e := lc.entries[k]
	if e == nil {
		e = &liveEntry{}
		lc.entries[k] = e
	}
	return e
}

// load LISTs the collection page by page. Forbidden: GET per object from
// now on. Any other failure (a kind not served yet, an expired continue
// token, an outage) leaves the entry unloaded: this read GETs, a later one
// lists again.
func (c *Clients) load(ctx context.Context, m *meta.RESTMapping, ns string, e *liveEntry) {
	objs := map[string]*unstructured.Unstructured{}
	opts := metav1.ListOptions{Limit: ListPageSize}
	for {
		list, err := c.resourceFor(m, ns).List(ctx, opts)
		if apierrors.IsForbidden(err) {
			e.loaded, e.perObject = true, true
			return
		}
		if err != nil {
			return
		}
		for i := range list.Items {
			o := &list.Items[i]
			if o.GetKind() == "" { // list items may come without their type
				o.SetGroupVersionKind(m.GroupVersionKind)
			}
			objs[o.GetName()] = o
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			break
		}
	}
	e.loaded, e.objs = true, objs
}

// remember records what the server answered to khook's own write (a
// no-op without a cache or before the collection was listed).
func (c *Clients) remember(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured) {
	lc := liveCacheOf(ctx)
	if lc == nil || obj == nil || !strings.EqualFold(obj.GetKind(), m.GroupVersionKind.Kind) {
		return
	}
	ns := obj.GetNamespace()
	if !namespacedMapping(m) {
		ns = ""
	}
	e := lc.entry(liveKey{m.Resource, ns})
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.loaded && !e.perObject {
		e.objs[obj.GetName()] = obj.DeepCopy()
	}
}

// InvalidateLiveOf drops the cached collection of m in ns after a write
// whose result khook does not hold (a patch, a delete that may still be
// finishing): the next read lists it again.
func InvalidateLiveOf(ctx context.Context, m *meta.RESTMapping, ns string) {
	lc := liveCacheOf(ctx)
	if lc == nil {
		return
	}
	if !namespacedMapping(m) {
		ns = ""
	}
	lc.mu.Lock()
	delete(lc.entries, liveKey{m.Resource, ns})
	lc.mu.Unlock()
}

func namespacedMapping(m *meta.RESTMapping) bool {
	return m.Scope.Name() == meta.RESTScopeNameNamespace
}
