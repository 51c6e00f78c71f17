package wait

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilptr "k8s.io/utils/ptr"

	"github.com/khook/khook/model"
)

// pods describes the worst of the unready pods and reads the log tails of
// their crashed containers.
func (d *diagnoser) pods(pods []corev1.Pod) {
	d.out.PodsNotReady = len(pods)
	sortWorstFirst(pods)
	if len(pods) > d.lim.Pods {
		pods = pods[:d.lim.Pods]
	}
	tails := 0
	for i := range pods {
		p := &pods[i]
		d.watchEvents(p.Namespace, p.UID, "Pod", p.Name)
		dp := model.DiagnosedPod{Namespace: p.Namespace, Name: p.Name, Phase: string(p.Status.Phase), Condition: failingCondition(p)}
		for j, cs := range allStatuses(p) {
			dc := container(cs, j < len(p.Status.InitContainerStatuses))
			if crashed(cs) && tails < d.lim.LogTails {
				tails++
				dc.Logs, dc.LogsPrevious = d.logTail(p, cs)
			}
			dp.Containers = append(dp.Containers, dc)
		}
		d.out.Pods = append(d.out.Pods, dp)
	}
	if d.out.PodsNotReady == len(d.out.Pods) {
		d.out.PodsNotReady = 0 // all shown: nothing to say
	}
}

// sortWorstFirst orders pods by podSeverity, then most restarts, then name.
func sortWorstFirst(pods []corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		si, sj := podSeverity(&pods[i]), podSeverity(&pods[j])
		if si != sj {
			return si < sj
		}
		if ri, rj := restarts(&pods[i]), restarts(&pods[j]); ri != rj {
			return ri > rj
		}
		return pods[i].Name < pods[j].Name
	})
}

// allStatuses are the init containers' statuses, then the containers'.
func allStatuses(p *corev1.Pod) []corev1.ContainerStatus {
	return append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
}

// podSeverity orders pods worst first: crashed or failed, then containers
// that cannot start (image pulls, configuration), then unschedulable, then
// other pending, then running but unready.
func podSeverity(p *corev1.Pod) int {
	if p.Status.Phase == corev1.PodFailed {
		return 0
	}
	worst := 5
	for _, cs := range allStatuses(p) {
		switch {
		case crashed(cs):
			return 0
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "" && cs.State.Waiting.Reason != "ContainerCreating" && cs.State.Waiting.Reason != "PodInitializing":
			worst = min(worst, 1)
		}
	}
	if worst < 5 {
		return worst
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return 2
		}
	}
	if p.Status.Phase == corev1.PodPending {
		return 3
	}
	return 4
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// crashed: the container exited non-zero, now or in its previous instance.
func crashed(cs corev1.ContainerStatus) bool {
	if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
		return true
	}
	if t := cs.LastTerminationState.Terminated; t != nil && t.ExitCode != 0 {
		return true
	}
	return cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff"
}

// failingCondition is the condition that explains most: PodScheduled
// before Initialized before ContainersReady before Ready.
func failingCondition(p *corev1.Pod) *model.PodCondition {
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		for _, c := range p.Status.Conditions {
			if c.Type == t && c.Status != corev1.ConditionTrue {
				return &model.PodCondition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message}
			}
		}
	}
	return nil
}

func container(cs corev1.ContainerStatus, init bool) model.DiagnosedContainer {
	dc := model.DiagnosedContainer{Name: cs.Name, Image: cs.Image, Init: init, Ready: cs.Ready, Restarts: cs.RestartCount}
	switch s := cs.State; {
	case s.Waiting != nil:
		dc.State, dc.Reason, dc.Message = "waiting", s.Waiting.Reason, s.Waiting.Message
	case s.Terminated != nil:
		dc.State, dc.Reason, dc.Message = "terminated", s.Terminated.Reason, s.Terminated.Message
		dc.ExitCode = utilptr.To(s.Terminated.ExitCode)
	case s.Running != nil:
		dc.State = "running"
	default:
		dc.State = "unknown"
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		dc.LastTermination = &model.Termination{Reason: t.Reason, Message: t.Message, ExitCode: t.ExitCode}
	}
	return dc
}

// logTail reads a crashed container's last lines: of its previous instance
// when it restarted and is not itself the one that ended.
func (d *diagnoser) logTail(p *corev1.Pod, cs corev1.ContainerStatus) ([]string, bool) {
	previous := cs.RestartCount > 0 && cs.State.Terminated == nil
	ctx, cancel := d.read()
	defer cancel()
	raw, err := d.c.Typed.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{
		Container: cs.Name, Previous: previous, TailLines: utilptr.To(int64(d.lim.LogLines)),
	}).DoRaw(ctx)
	if err != nil {
		d.cannot(fmt.Sprintf("the logs of container %s of pod %s/%s", cs.Name, p.Namespace, p.Name), err)
		return nil, false
	}
	text := strings.TrimRight(string(raw), "\n")
	if text == "" {
		return nil, false
	}
	lines := strings.Split(text, "\n")
	if len(lines) > d.lim.LogLines {
		lines = lines[len(lines)-d.lim.LogLines:]
	}
	return lines, previous
}

// events reads, per namespace, the Warning events of the diagnosed objects
// since the step started, deduplicated by object, reason and message, the
// most frequent first.
func (d *diagnoser) events() {
	type key struct{ obj, reason, msg string }
	byKey := map[key]*model.DiagnosedEvent{}
	last := map[key]time.Time{}
	var order []key
	since := d.since.Add(-time.Second) // event times have second precision
	for _, ns := range d.namespaces {
		ctx, cancel := d.read()
		list, err := d.c.Typed.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("type", corev1.EventTypeWarning).String(), Limit: 500,
		})
		cancel()
		if err != nil {
			d.cannot("the events in namespace "+ns, err)
			continue
		}
		for _, e := range list.Items {
			obj, ok := d.uids[e.InvolvedObject.UID]
			when := eventTime(&e)
			if !ok || (!d.since.IsZero() && when.Before(since)) {
				continue
			}
			k := key{obj, e.Reason, strings.TrimSpace(e.Message)}
			n := max(e.Count, 1)
			if e.Series != nil {
				n = max(n, e.Series.Count)
			}
			if ev, ok := byKey[k]; ok {
				ev.Count += n
			} else {
				byKey[k] = &model.DiagnosedEvent{Object: obj, Reason: e.Reason, Message: k.msg, Count: n}
				order = append(order, k)
			}
			if when.After(last[k]) {
				last[k] = when
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if a, b := byKey[order[i]].Count, byKey[order[j]].Count; a != b {
			return a > b
		}
		return last[order[i]].After(last[order[j]])
	})
	if len(order) > d.lim.Events {
		order = order[:d.lim.Events]
	}
	for _, k := range order {
		d.out.Events = append(d.out.Events, *byKey[k])
	}
}

// eventTime is when an event last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	t := e.LastTimestamp.Time
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	if e.EventTime.After(t) {
		t = e.EventTime.Time
	}
	if t.IsZero() {
		t = e.FirstTimestamp.Time
	}
	if t.IsZero() {
		t = e.CreationTimestamp.Time
	}
	return t
}
