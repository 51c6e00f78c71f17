package policy

import (
	"context"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// nsLister is a run's namespaces as admission sees them, the namespace
// lister of the run's one matcher: those the spec defines, with their
// labels, and on a live plan those read from the cluster, each read once
// per run. Steps plan in parallel, so it is safe for concurrent use, and
// a label a step's plan defines is seen by every later lookup.
type nsLister struct {
	mu   sync.Mutex
	spec map[string]map[string]string // namespaces the spec defines
	live map[string]*corev1.Namespace // read from the cluster; nil: not found
	// reading serialises the reads, so that parallel steps read each
	// namespace once.
	reading sync.Mutex
}

var _ corelisters.NamespaceLister = (*nsLister)(nil)

// define records a namespace the spec creates, adding labels to those it
// has.
func (l *nsLister) define(name string, labels map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.spec == nil {
		l.spec = map[string]map[string]string{}
	}
	merged := maps.Clone(l.spec[name])
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, labels)
	l.spec[name] = merged
}

// read reads a namespace from the cluster unless this run did: found and
// not found are kept; an error is not, so the next change reads again
// (and until then each policy on the labels fails by its failurePolicy).
func (l *nsLister) read(ctx context.Context, name string, get func(context.Context, string) (map[string]any, error)) error {
	l.reading.Lock()
	defer l.reading.Unlock()
	l.mu.Lock()
	_, done := l.live[name]
	l.mu.Unlock()
	if done {
		return nil
	}
	obj, err := get(ctx, name)
	var ns *corev1.Namespace
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("the plan could not read namespace %s: %w", name, err)
	case obj != nil:
		ns = &corev1.Namespace{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, ns); err != nil {
			return fmt.Errorf("the plan could not read namespace %s: %w", name, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live == nil {
		l.live = map[string]*corev1.Namespace{}
	}
	l.live[name] = ns
	return nil
}

// lookup is the namespace as admission sees it now, from memory: as read
// from the cluster, else with the labels the spec gives it, else with only
// the label the server sets; and whether its labels are known.
func (l *nsLister) lookup(name string) (*corev1.Namespace, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ns := l.live[name]; ns != nil {
		return ns, true
	}
	specLabels, known := l.spec[name]
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: maps.Clone(specLabels)}}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[nsNameLabel] = name
	return ns, known
}

// Get is the matcher's and the dispatcher's namespace: each change's was
// read before they ask (Set.namespace), so it never reads.
func (l *nsLister) Get(name string) (*corev1.Namespace, error) {
	ns, _ := l.lookup(name)
	return ns, nil
}

// List is the namespaces this run knows whose labels match.
func (l *nsLister) List(sel labels.Selector) ([]*corev1.Namespace, error) {
	l.mu.Lock()
	names := map[string]bool{}
	for n, ns := range l.live {
		names[n] = ns != nil
	}
	for n := range l.spec {
		names[n] = true
	}
	l.mu.Unlock()
	var out []*corev1.Namespace
	for n, ok := range names {
		if ns, _ := l.lookup(n); ok && sel.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns)
		}
	}
	return out, nil
}

// nsInfo is the change's namespace as admission sees it, and whether its
// labels are known (read from the cluster, or defined by the spec).
type nsInfo struct {
	known bool
	err   error // a live plan's read of it erred (not: it does not exist yet)
}

// namespace is a change's namespace: read from the cluster on a live plan
// (once per run), else as the spec defines it; unknown otherwise, with
// only the label the server sets.
func (set *Set) namespace(ctx context.Context, name string) nsInfo {
	if name == "" {
		return nsInfo{known: true}
	}
	var readErr error
	if set.Namespace != nil {
		readErr = set.ns.read(ctx, name, set.Namespace)
	}
	_, known := set.ns.lookup(name)
	if known {
		readErr = nil // the spec creates it: its labels are the spec's
	}
	return nsInfo{known: known, err: readErr}
}
