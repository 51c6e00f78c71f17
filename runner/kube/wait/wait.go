package wait

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/readiness"
	"github.com/khook/khook/words"
)

// Target selects the objects a wait watches.
type Target struct {
	Mapping *meta.RESTMapping
	// Namespace is ignored for cluster-scoped types; empty for a namespaced
	// type means all namespaces.
	Namespace     string
	Name          string // one object; empty: every object the selectors match
	LabelSelector string
	FieldSelector string
}

// String describes the target for messages: "deployment.apps/web in demo",
// "pods -l app=web in all namespaces".
func (t Target) String() string {
	s := kube.TypeName(t.Mapping)
	if t.Name != "" {
		s = kube.KindName(t.Mapping) + "/" + t.Name
	}
	if t.LabelSelector != "" {
		s += " -l " + t.LabelSelector
	}
	if t.FieldSelector != "" {
		s += " --field-selector " + t.FieldSelector
	}
	if t.namespaced() {
		if t.Namespace == "" {
			return s + " in all namespaces"
		}
		return s + " in " + t.Namespace
	}
	return s
}

func (t Target) namespaced() bool { return t.Mapping.Scope.Name() == meta.RESTScopeNameNamespace }

// Validate parses the selectors so a typo fails before any watch starts.
func (t Target) Validate() error {
	if _, err := labels.Parse(t.LabelSelector); err != nil {
		return fmt.Errorf("invalid label selector %q: %v", t.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(t.FieldSelector); err != nil {
		return fmt.Errorf("invalid field selector %q: %v", t.FieldSelector, err)
	}
	return nil
}

func (t Target) resource(c *kube.Clients) dynamic.ResourceInterface {
	r := c.Dynamic.Resource(t.Mapping.Resource)
	if t.namespaced() && t.Namespace != "" {
		return r.Namespace(t.Namespace)
	}
	return r
}

// fieldSelector adds metadata.name for a named target, as kubectl wait does.
func (t Target) fieldSelector() string {
	sel := t.FieldSelector
	if t.Name != "" {
		byName := "metadata.name=" + t.Name
		if sel == "" {
			return byName
		}
		return sel + "," + byName
	}
	return sel
}

// ListWatch lists and watches exactly the target's objects.
func (t Target) ListWatch(c *kube.Clients) *cache.ListWatch {
	r := t.resource(c)
	opts := func(o *metav1.ListOptions) {
		o.LabelSelector = t.LabelSelector
		o.FieldSelector = t.fieldSelector()
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			opts(&o)
			return r.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			opts(&o)
			return r.Watch(ctx, o)
		},
	}
}

// List returns the objects the target selects now, sorted by namespace and
// name: a one-shot evaluation (plan: is this wait already a no-op?).
func (t Target) List(ctx context.Context, c *kube.Clients) ([]*unstructured.Unstructured, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	list, err := t.resource(c).List(ctx, metav1.ListOptions{LabelSelector: t.LabelSelector, FieldSelector: t.fieldSelector()})
	if err != nil {
		return nil, fmt.Errorf("cannot list %s: %w", t, c.Explain(err))
	}
	items := make([]any, len(list.Items))
	for i := range list.Items {
		items[i] = &list.Items[i]
	}
	return sorted(items), nil
}

// For watches the target's objects (an informer over a ListWatch: a list,
// then a watch that resumes after disconnects) and re-evaluates p on every
// event until it holds or ctx ends. It never polls: it returns as soon as
// the event that makes p true arrives. what names the awaited condition in
// the timeout error ("condition=Ready").
func For(ctx context.Context, c *kube.Clients, t Target, what string, p readiness.Predicate) error {
	if err := t.Validate(); err != nil {
		return err
	}
	start := time.Now()
	wake := make(chan struct{}, 1)
	notify := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	lw := t.ListWatch(c)
	lost := &lostServer{}
	lost.wrap(lw)
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &unstructured.Unstructured{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { notify() },
			UpdateFunc: func(any, any) { notify() },
			DeleteFunc: func(any) { notify() },
		},
	})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() { defer close(done); ctrl.RunWithContext(runCtx) }()
	defer func() { stop(); <-done }()

	// Surface list errors (forbidden, unreachable) instead of waiting them out.
	listErr := make(chan error, 1)
	go func() {
		_, err := t.resource(c).List(runCtx, metav1.ListOptions{LabelSelector: t.LabelSelector, FieldSelector: t.fieldSelector(), Limit: 1})
		listErr <- err
	}()

	synced := ctrl.HasSyncedChecker().Done()
	pending := "the first list has not completed"
	prog, podsWatched := newProgress(ctx), false
	podsDone := func() {}
	defer func() { stop(); podsDone() }()
	var seen *unstructured.Unstructured // a named target, once listed
	for {
		if ctrl.HasSynced() {
			objs := sorted(store.List())
			ok, why, err := p(objs)
			if err != nil || ok {
				return err
			}
			if t.Name != "" {
				// A named object that goes while awaited will not meet
				// the condition: say so now, not at the time-out.
				if len(objs) == 0 && seen != nil {
					return fmt.Errorf("%s was deleted while khook waited for %s (it was there %s ago)", kube.ObjectName(seen), what, words.ShortDuration(kube.RoundElapsed(time.Since(start))))
				}
				if len(objs) == 1 {
					seen = objs[0]
					if seen.GetDeletionTimestamp() != nil && !strings.Contains(why, "terminating") {
						why += "; " + kube.BeingDeleted(seen)
					}
				}
			}
			pending = why
			prog.set(&why, nil)
			if prog.enabled() && !podsWatched && t.Name != "" && len(objs) == 1 {
				podsWatched = true
				podsDone = prog.watchPods(runCtx, c, objs[0])
			}
		}
		select {
		case <-wake:
		case <-synced: // an empty first list sends no event
			synced = nil
		case err := <-listErr:
			if err != nil && runCtx.Err() == nil {
				// A server restarting or briefly away is waited out: the
				// informer lists again with backoff, and a time-out says
				// the server was away (lostServer).
				if !kube.IsTransport(err) {
					return fmt.Errorf("cannot watch %s: %w", t, c.Explain(err))
				}
			}
		case <-ctx.Done():
			if why := lost.String(c); why != "" {
				pending += "; " + why
			}
			return kube.WaitError(ctx, start, what, t.String(), pending)
		}
	}
}

// lostServer remembers, while the informer's lists and watches fail to
// connect, since when and why, so that a wait timing out during an outage
// says the API server was away rather than only what its cache last saw.
type lostServer struct {
	mu    sync.Mutex
	since time.Time
	err   error
}

func (l *lostServer) wrap(lw *cache.ListWatch) {
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	lw.ListWithContextFunc = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		obj, err := list(ctx, o)
		l.note(err)
		return obj, err
	}
	lw.WatchFuncWithContext = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		w, err := watchFn(ctx, o)
		l.note(err)
		return w, err
	}
}

func (l *lostServer) note(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.since, l.err = time.Time{}, nil
	case kube.IsTransport(err) && l.err == nil:
		l.since, l.err = time.Now(), err
	}
}

// String is "" while the server answers, else a sentence naming it.
func (l *lostServer) String(c *kube.Clients) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		return ""
	}
	return fmt.Sprintf("the API server at %s has been unreachable for the last %s (%s)",
		kube.HostOf(c.Config), words.ShortDuration(kube.RoundElapsed(time.Since(l.since))), kube.TransportReason(l.err))
}

func sorted(items []any) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		if u, ok := it.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GetNamespace() != out[j].GetNamespace() {
			return out[i].GetNamespace() < out[j].GetNamespace()
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out
}
