package wait

import (
	"context"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/readiness"
)

// progress reports what blocks a wait, once per change.
type progress struct {
	f func(string)
	// clears: report "" too when the blocker is gone (WatchBlockers' parts).
	clears bool
	mu     sync.Mutex
	why    string // the predicate's pending text
	pod    string // the worst unready pod of the awaited workload
	last   string
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
	changed := (msg != "" || p.clears) && msg != p.last
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
func (p *progress) watchPods(ctx context.Context, c *kube.Clients, obj *unstructured.Unstructured) (wait func()) {
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

// WatchBlockers reports, through ctx's step progress and once per change,
// the worst unready pod of each workload among refs (at most limit of
// them), for a wait khook does not run itself (Helm's): "Deployment
// ns/web: pod web-6b7-x Pending: PodScheduled=False Unschedulable: 0/3
// nodes are available: ...". It reads the workloads in the background and
// returns at once; the returned function waits for the watches, which end
// with ctx.
func WatchBlockers(ctx context.Context, c *kube.Clients, refs []ObjectRef, limit int) (wait func()) {
	f := model.StepProgress(ctx)
	if f == nil {
		return func() {}
	}
	var workloads []ObjectRef
	for _, r := range workloadsFirst(refs) {
		if workloadRank(r) > 0 || len(workloads) == limit {
			break
		}
		if r.GVK.Kind != "Pod" && r.GVK.Kind != "ReplicationController" {
			workloads = append(workloads, r)
		}
	}
	var mu sync.Mutex
	blockers := make([]string, len(workloads))
	last := ""
	update := func(i int, msg string) {
		mu.Lock()
		blockers[i] = msg
		var parts []string
		for j, b := range blockers {
			if b != "" {
				parts = append(parts, workloads[j].GVK.Kind+" "+readiness.QualifiedName(workloads[j].Namespace, workloads[j].Name)+": "+b)
			}
		}
		msg = strings.Join(parts, "; ")
		changed := msg != "" && msg != last
		last = msg
		mu.Unlock()
		if changed {
			f(msg)
		}
	}
	var wg sync.WaitGroup
	for i, ref := range workloads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := c.MappingFor(ctx, ref.GVK)
			if err != nil {
				return
			}
			obj, err := c.Resource(m, ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return // not there yet, or the wait is over: the diagnosis will say
			}
			p := &progress{f: func(msg string) { update(i, msg) }, clears: true}
			p.watchPods(ctx, c, obj)()
		}()
	}
	return wg.Wait
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
