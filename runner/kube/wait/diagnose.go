package wait

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/readiness"
)

// DiagnoseLimits bound a diagnosis: it runs after a step already failed,
// so it reads a fixed number of things, each with its own short deadline.
type DiagnoseLimits struct {
	Objects     int           // awaited objects read
	Pods        int           // unready pods described, the worst first
	Events      int           // Warning events shown (after deduplication)
	LogTails    int           // containers whose logs are read
	LogLines    int           // lines per log tail
	ReadTimeout time.Duration // each read
	Total       time.Duration // the whole diagnosis
}

// DefaultDiagnoseLimits are what a run uses.
var DefaultDiagnoseLimits = DiagnoseLimits{
	Objects: 20, Pods: 3, Events: 10, LogTails: 3, LogLines: 10,
	ReadTimeout: 3 * time.Second, Total: 10 * time.Second,
}

// ObjectRef names an object a step waited on.
type ObjectRef struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

// RefOf is the reference to a read or applied object.
func RefOf(obj *unstructured.Unstructured) ObjectRef {
	return ObjectRef{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// workloadsFirst orders refs for a diagnosis bounded to the first few:
// what runs pods, then claims and Services, then the rest, each in the
// given order. A release lists its workloads after its ServiceAccounts,
// ConfigMaps and RBAC (Helm's install order): cut first, a chart with many
// of those (cilium) would have its stuck Deployment cut off and nothing to
// say.
func workloadsFirst(refs []ObjectRef) []ObjectRef {
	out := slices.Clone(refs)
	slices.SortStableFunc(out, func(a, b ObjectRef) int { return workloadRank(a) - workloadRank(b) })
	return out
}

// workloadRank is 0 for what runs pods, 1 for claims and Services, 2 for
// the rest.
func workloadRank(r ObjectRef) int {
	switch r.GVK.GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"},
		schema.GroupKind{Group: "batch", Kind: "Job"}, schema.GroupKind{Kind: "Pod"}, schema.GroupKind{Kind: "ReplicationController"}:
		return 0
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}, schema.GroupKind{Kind: "Service"}:
		return 1
	}
	return 2
}

// Diagnosable reports whether a failed step is worth diagnosing: not when
// the run was interrupted (it must stop at once).
func Diagnosable(ctx context.Context, err error) bool {
	return err != nil && !errors.Is(ctx.Err(), context.Canceled)
}

// Diagnose reads what the objects a failed step waited on are stuck on:
// those not ready with kstatus's message, their unready pods (Deployment →
// ReplicaSets → Pods, StatefulSet, DaemonSet and Job → Pods), the pods'
// container states, the Warning events since since, and the log tails of
// containers that crashed. It never fails: what it cannot read it names in
// Unreadable. It runs on its own deadline, after ctx's has passed.
func Diagnose(ctx context.Context, c *kube.Clients, since time.Time, refs []ObjectRef, lim DiagnoseLimits) *model.Diagnosis {
	base, cancel := context.WithTimeout(context.WithoutCancel(ctx), lim.Total)
	defer cancel()
	d := &diagnoser{c: c, ctx: base, lim: lim, since: since, out: &model.Diagnosis{}, uids: map[types.UID]string{}}
	refs = workloadsFirst(refs)
	if len(refs) > lim.Objects {
		refs = refs[:lim.Objects]
	}
	var pods []corev1.Pod
	seen := map[types.UID]bool{}
	for _, ref := range refs {
		for _, p := range d.object(ref) {
			if !seen[p.UID] {
				seen[p.UID] = true
				pods = append(pods, p)
			}
		}
	}
	d.pods(pods)
	d.events()
	d.out.Reason = d.reason()
	if d.out.Empty() {
		return nil
	}
	return d.out
}

type diagnoser struct {
	c     *kube.Clients
	ctx   context.Context
	lim   DiagnoseLimits
	since time.Time
	out   *model.Diagnosis
	// uids are the objects whose events count, as "Kind/name".
	uids       map[types.UID]string
	namespaces []string
}

func (d *diagnoser) read() (context.Context, context.CancelFunc) {
	return context.WithTimeout(d.ctx, d.lim.ReadTimeout)
}

func (d *diagnoser) cannot(what string, err error) {
	d.out.Unreadable = append(d.out.Unreadable, fmt.Sprintf("%s: %v", what, d.c.Explain(err)))
}

func (d *diagnoser) watchEvents(ns string, uid types.UID, kind, name string) {
	d.uids[uid] = kind + "/" + name
	for _, n := range d.namespaces {
		if n == ns {
			return
		}
	}
	d.namespaces = append(d.namespaces, ns)
}

// object reads one awaited object, records it when it is not ready and
// returns its unready pods.
func (d *diagnoser) object(ref ObjectRef) []corev1.Pod {
	what := ref.GVK.Kind + " " + readiness.QualifiedName(ref.Namespace, ref.Name)
	ctx, cancel := d.read()
	defer cancel()
	m, err := d.c.MappingFor(ctx, ref.GVK)
	if err != nil {
		d.cannot(what, err)
		return nil
	}
	obj, err := d.c.Resource(m, ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		if kube.IsNotFoundish(err) {
			d.out.Objects = append(d.out.Objects, model.DiagnosedObject{Kind: ref.GVK.Kind, Namespace: ref.Namespace, Name: ref.Name, Status: status.NotFoundStatus.String()})
		} else {
			d.cannot(what, err)
		}
		return nil
	}
	if ref.GVK.Kind == "Pod" && ref.GVK.Group == "" {
		var p corev1.Pod
		if runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &p) == nil && !podReady(&p) {
			return []corev1.Pod{p}
		}
		return nil
	}
	if ok, _ := readiness.Ready(obj); ok {
		return nil
	}
	o, _ := readiness.Status(obj)
	if o.Status == status.CurrentStatus.String() {
		// Current by kstatus, not ready by Ready's rules for its kind.
		_, why := readiness.Ready(obj)
		o.Status, o.Message = status.InProgressStatus.String(), why
	}
	d.out.Objects = append(d.out.Objects, o)
	d.watchEvents(obj.GetNamespace(), obj.GetUID(), ref.GVK.Kind, obj.GetName())
	return d.podsOf(obj)
}

// podsOf follows a workload to its unready pods.
func (d *diagnoser) podsOf(obj *unstructured.Unstructured) []corev1.Pod {
	gk := obj.GroupVersionKind().GroupKind()
	owners := map[types.UID]bool{obj.GetUID(): true}
	switch {
	case gk.Group == "apps" && gk.Kind == "Deployment":
		sel, ok := d.selector(obj)
		if !ok {
			return nil
		}
		ctx, cancel := d.read()
		defer cancel()
		rss, err := d.c.Typed.AppsV1().ReplicaSets(obj.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			d.cannot("the ReplicaSets of Deployment "+kube.ObjectName(obj), err)
			return nil
		}
		owners = map[types.UID]bool{}
		for _, rs := range rss.Items {
			if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == obj.GetUID() {
				owners[rs.UID] = true
				d.watchEvents(rs.Namespace, rs.UID, "ReplicaSet", rs.Name)
			}
		}
		return d.unreadyPods(obj, sel, owners)
	case gk.Group == "apps" && (gk.Kind == "StatefulSet" || gk.Kind == "DaemonSet" || gk.Kind == "ReplicaSet"),
		gk.Group == "batch" && gk.Kind == "Job":
		sel, ok := d.selector(obj)
		if !ok {
			return nil
		}
		return d.unreadyPods(obj, sel, owners)
	}
	return nil
}

func (d *diagnoser) selector(obj *unstructured.Unstructured) (string, bool) {
	raw, found, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	if !found {
		return "", false
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return "", false
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return "", false
	}
	return sel.String(), true
}

// unreadyPods lists the pods matching sel that one of owners controls and
// keeps those not ready.
func (d *diagnoser) unreadyPods(obj *unstructured.Unstructured, sel string, owners map[types.UID]bool) []corev1.Pod {
	ctx, cancel := d.read()
	defer cancel()
	if _, err := labels.Parse(sel); err != nil {
		return nil
	}
	list, err := d.c.Typed.CoreV1().Pods(obj.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		d.cannot("the pods of "+obj.GetKind()+" "+kube.ObjectName(obj), err)
		return nil
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref == nil || !owners[ref.UID] {
			continue
		}
		if p.DeletionTimestamp == nil && !podReady(&p) && p.Status.Phase != corev1.PodSucceeded {
			out = append(out, p)
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// reason is the one line that stands for the diagnosis: the worst pod, else
// the first unready object.
func (d *diagnoser) reason() string {
	if len(d.out.Pods) > 0 {
		p := d.out.Pods[0]
		return "pod " + p.Name + " " + p.Summary()
	}
	for _, o := range d.out.Objects {
		s := o.Kind + " " + readiness.QualifiedName(o.Namespace, o.Name) + " " + o.Status
		if o.Message != "" {
			s += ": " + o.Message
		}
		return s
	}
	return ""
}
