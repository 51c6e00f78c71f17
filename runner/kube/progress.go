package kube

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/khook/khook/model"
)

// progress reports what blocks a wait, once per change.
type progress struct {
	f    func(string)
	mu   sync.Mutex
	why  string // the predicate's pending text
	pod  string // the worst unready pod of the awaited workload
	last string
}

func newProgress(ctx context.Context) *progress {
	return &progress{f: model.StepProgress(ctx)}
}

func (p *progress) enabled() bool { return p.f != nil }

func (p *progress) set(why, pod *string) {
	if p.f == nil {
		return
	}
	p.mu.Lock()
	if why != nil {
		p.why = *why
	}
	if pod != nil {
		p.pod = *pod
	}
	msg := p.why
	if p.pod != "" {
		if msg != "" {
			msg += "; "
		}
		msg += p.pod
	}
	changed := msg != "" && msg != p.last
	p.last = msg
	p.mu.Unlock()
	if changed {
		p.f(msg)
	}
}

// watchPods follows the pods of the one workload a wait targets, and
// reports the worst unready one as the wait's blocker. It returns at once
// for anything but a Deployment, StatefulSet, DaemonSet, ReplicaSet or Job.
// The returned function waits until the watch has ended (after ctx).
func (p *progress) watchPods(ctx context.Context, c *Clients, obj *unstructured.Unstructured) (wait func()) {
	d := &diagnoser{c: c}
	gk := obj.GroupVersionKind().GroupKind()
	if !(gk.Group == "apps" && (gk.Kind == "Deployment" || gk.Kind == "StatefulSet" || gk.Kind == "DaemonSet" || gk.Kind == "ReplicaSet")) &&
		!(gk.Group == "batch" && gk.Kind == "Job") {
		return func() {}
	}
	sel, ok := d.selector(obj)
	if !ok {
		return func() {}
	}
	t := Target{Mapping: podMappingForWait, Namespace: obj.GetNamespace(), LabelSelector: sel}
	var store cache.Store
	update := func() {
		var pods []corev1.Pod
		for _, it := range store.List() {
			u, ok := it.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			var pod corev1.Pod
			if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pod) == nil &&
				pod.DeletionTimestamp == nil && !podReady(&pod) && pod.Status.Phase != corev1.PodSucceeded {
				pods = append(pods, pod)
			}
		}
		blocker := worstPod(pods)
		p.set(nil, &blocker)
	}
	var ctrl cache.Controller
	store, ctrl = cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: t.ListWatch(c),
		ObjectType:    &unstructured.Unstructured{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { update() },
			UpdateFunc: func(any, any) { update() },
			DeleteFunc: func(any) { update() },
		},
	})
	done := make(chan struct{})
	go func() { defer close(done); ctrl.RunWithContext(ctx) }()
	return func() { <-done }
}

// worstPod is "pod NAME SUMMARY" for the worst of the unready pods, "" for
// none.
func worstPod(pods []corev1.Pod) string {
	if len(pods) == 0 {
		return ""
	}
	sortWorstFirst(pods)
	p := pods[0]
	dp := model.DiagnosedPod{Namespace: p.Namespace, Name: p.Name, Phase: string(p.Status.Phase), Condition: failingCondition(&p)}
	for j, cs := range allStatuses(&p) {
		dp.Containers = append(dp.Containers, container(cs, j < len(p.Status.InitContainerStatuses)))
	}
	return "pod " + p.Name + " " + dp.Summary()
}

var podMappingForWait = &meta.RESTMapping{
	Resource:         corev1.SchemeGroupVersion.WithResource("pods"),
	GroupVersionKind: corev1.SchemeGroupVersion.WithKind("Pod"),
	Scope:            meta.RESTScopeNamespace,
}
