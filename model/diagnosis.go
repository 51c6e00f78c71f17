package model

import (
	"fmt"
	"strings"

	"github.com/khook/khook/words"
)

// Diagnosis is what khook found, at the moment a step failed, about the
// objects it was waiting on: what `kubectl describe` and `kubectl logs`
// would have said. runner/kube builds it (bounded: a few pods, events and
// log lines); the renderers here print it under the failed step.
type Diagnosis struct {
	// Reason is the one-line cause, the worst pod first: "pod web-7f9c-x2
	// CrashLoopBackOff: OOMKilled (exit 137), 5 restarts".
	Reason string `json:"reason,omitempty"`
	// RolledBack says a helm atomic step undid its release, and why.
	RolledBack string `json:"rolledBack,omitempty"`
	// Objects are the awaited objects that are not ready, with kstatus's
	// message.
	Objects []DiagnosedObject `json:"objects,omitempty"`
	// Pods are the worst of the unready pods of those objects; PodsNotReady
	// counts all of them (more than len(Pods) when the diagnosis is cut).
	Pods         []DiagnosedPod `json:"pods,omitempty"`
	PodsNotReady int            `json:"podsNotReady,omitempty"`
	// Events are the Warning events of those objects and pods since the
	// step started, deduplicated, most frequent first.
	Events []DiagnosedEvent `json:"events,omitempty"`
	// Unreadable says what the diagnosis could not read and why ("the
	// events in namespace shop: forbidden ...").
	Unreadable []string `json:"unreadable,omitempty"`
}

// DiagnosedObject is one awaited object that is not ready.
type DiagnosedObject struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Status    string `json:"status"`            // kstatus: InProgress, Failed, NotFound ...
	Message   string `json:"message,omitempty"` // kstatus's message
}

// DiagnosedPod is one unready pod.
type DiagnosedPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Phase     string `json:"phase"`
	// Condition is the failing pod condition that explains most
	// (PodScheduled=False Unschedulable), if any.
	Condition  *PodCondition        `json:"condition,omitempty"`
	Containers []DiagnosedContainer `json:"containers,omitempty"`
}

// PodCondition is a pod condition that is not True.
type PodCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// DiagnosedContainer is one container's state (init containers too).
type DiagnosedContainer struct {
	Name     string `json:"name"`
	Image    string `json:"image,omitempty"`
	Init     bool   `json:"init,omitempty"`
	Ready    bool   `json:"ready"`
	State    string `json:"state"`            // waiting | running | terminated
	Reason   string `json:"reason,omitempty"` // CrashLoopBackOff, ImagePullBackOff, Error ...
	Message  string `json:"message,omitempty"`
	ExitCode *int32 `json:"exitCode,omitempty"`
	Restarts int32  `json:"restarts"`
	// LastTermination is how the previous instance ended (OOMKilled, 137).
	LastTermination *Termination `json:"lastTermination,omitempty"`
	// Logs are the last log lines, of the previous instance when
	// LogsPrevious (the one that crashed).
	Logs         []string `json:"logs,omitempty"`
	LogsPrevious bool     `json:"logsPrevious,omitempty"`
}

// Termination is how a container instance ended.
type Termination struct {
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
	ExitCode int32  `json:"exitCode"`
}

// DiagnosedEvent is a Warning event, deduplicated.
type DiagnosedEvent struct {
	Object  string `json:"object"` // Kind/name
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Count   int32  `json:"count"`
}

// Empty reports whether there is nothing to show.
func (d *Diagnosis) Empty() bool {
	return d == nil || (d.Reason == "" && d.RolledBack == "" && len(d.Objects) == 0 && len(d.Pods) == 0 &&
		len(d.Events) == 0 && len(d.Unreadable) == 0)
}

// Summary is a pod's state in one line: "CrashLoopBackOff: OOMKilled
// (exit 137), 5 restarts", "Pending: PodScheduled=False Unschedulable:
// 0/1 nodes are available: ...".
func (p DiagnosedPod) Summary() string {
	for _, c := range p.Containers {
		if c.Ready || (c.State == "running" && c.LastTermination == nil) || (c.State == "terminated" && c.ExitCode != nil && *c.ExitCode == 0) {
			continue
		}
		s := c.Reason
		if s == "" {
			s = c.State
		}
		var why []string
		switch {
		case c.LastTermination != nil && c.State != "terminated":
			why = append(why, termination(*c.LastTermination))
		case c.State == "terminated" && c.ExitCode != nil:
			why = append(why, fmt.Sprintf("exit %d", *c.ExitCode))
		case c.Message != "":
			why = append(why, c.Message)
		}
		if c.Restarts > 0 {
			why = append(why, fmt.Sprintf("%d %s", c.Restarts, words.Plural(int(c.Restarts), "restart", "restarts")))
		}
		if len(why) > 0 {
			s += ": " + strings.Join(why, ", ")
		}
		if len(p.Containers) > 1 {
			s = "container " + c.Name + " " + s
		}
		return s
	}
	if c := p.Condition; c != nil {
		return p.Phase + ": " + c.String()
	}
	return p.Phase
}

// String: "PodScheduled=False Unschedulable: 0/1 nodes are available".
func (c PodCondition) String() string {
	s := c.Type + "=" + c.Status
	if c.Reason != "" {
		s += " " + c.Reason
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

func termination(t Termination) string {
	s := t.Reason
	if s == "" {
		s = "terminated"
	}
	return fmt.Sprintf("%s (exit %d)", s, t.ExitCode)
}

// Lines renders the diagnosis as plain text, one fact per line, nested by
// two spaces: the terminal, the job summary, the comment and JUnit all
// print these lines.
func (d *Diagnosis) Lines() []string {
	if d.Empty() {
		return nil
	}
	var out []string
	add := func(indent int, format string, a ...any) {
		text := fmt.Sprintf(format, a...)
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			out = append(out, strings.Repeat("  ", indent)+l)
		}
	}
	if d.RolledBack != "" {
		add(0, "%s", d.RolledBack)
	}
	for _, o := range d.Objects {
		s := o.Kind + " " + qualified(o.Namespace, o.Name) + ": " + o.Status
		if o.Message != "" {
			s += ": " + o.Message
		}
		add(0, "%s", s)
	}
	if d.PodsNotReady > len(d.Pods) {
		add(0, "%d pods not ready; the worst %d:", d.PodsNotReady, len(d.Pods))
	}
	for _, p := range d.Pods {
		add(0, "pod %s: %s", qualified(p.Namespace, p.Name), p.Phase)
		if c := p.Condition; c != nil {
			add(1, "%s", c.String())
		}
		for _, c := range p.Containers {
			add(1, "%s", c.line())
			if len(c.Logs) > 0 {
				which := "last log lines"
				if c.LogsPrevious {
					which += " of the previous instance"
				}
				add(2, "%s:", which)
				for _, l := range c.Logs {
					add(3, "%s", l)
				}
			}
		}
	}
	if len(d.Events) > 0 {
		add(0, "warning events:")
		for _, e := range d.Events {
			count := ""
			if e.Count > 1 {
				count = fmt.Sprintf(" (x%d)", e.Count)
			}
			add(1, "%s %s%s: %s", e.Object, e.Reason, count, e.Message)
		}
	}
	for _, u := range d.Unreadable {
		add(0, "could not read %s", u)
	}
	return out
}

// line is a container's state: "container web: waiting CrashLoopBackOff
// (back-off ...), 5 restarts, last terminated OOMKilled (exit 137)".
func (c DiagnosedContainer) line() string {
	kind := "container"
	if c.Init {
		kind = "init container"
	}
	s := kind + " " + c.Name + ": " + c.State
	if c.Reason != "" {
		s += " " + c.Reason
	}
	if c.ExitCode != nil {
		s += fmt.Sprintf(" (exit %d)", *c.ExitCode)
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	if c.Restarts > 0 {
		s += ", " + fmt.Sprintf("%d %s", c.Restarts, words.Plural(int(c.Restarts), "restart", "restarts"))
	}
	if t := c.LastTermination; t != nil {
		s += ", last terminated " + termination(*t)
		if t.Message != "" {
			s += ": " + t.Message
		}
	}
	return s
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// Map rewrites every text of the diagnosis with f (the run's redactor:
// log lines are where a secret shows up first).
func (d *Diagnosis) Map(f func(string) string) {
	if d == nil {
		return
	}
	d.Reason, d.RolledBack = f(d.Reason), f(d.RolledBack)
	for i := range d.Objects {
		o := &d.Objects[i]
		o.Namespace, o.Name, o.Message = f(o.Namespace), f(o.Name), f(o.Message)
	}
	for i := range d.Pods {
		p := &d.Pods[i]
		p.Namespace, p.Name = f(p.Namespace), f(p.Name)
		if c := p.Condition; c != nil {
			c.Message = f(c.Message)
		}
		for j := range p.Containers {
			c := &p.Containers[j]
			c.Image, c.Message = f(c.Image), f(c.Message)
			if t := c.LastTermination; t != nil {
				t.Message = f(t.Message)
			}
			for k := range c.Logs {
				c.Logs[k] = f(c.Logs[k])
			}
		}
	}
	for i := range d.Events {
		e := &d.Events[i]
		e.Object, e.Message = f(e.Object), f(e.Message)
	}
	for i := range d.Unreadable {
		d.Unreadable[i] = f(d.Unreadable[i])
	}
}

// Text is the diagnosis as a block of text under a "diagnosis:" heading,
// prefixed with sep; "" when there is nothing to say.
func (d *Diagnosis) Text(sep string) string {
	lines := d.Lines()
	if len(lines) == 0 {
		return ""
	}
	return sep + d.Heading() + "\n  " + strings.Join(lines, "\n  ")
}

// Heading introduces the lines: "diagnosis: <the reason>".
func (d *Diagnosis) Heading() string {
	if d.Reason == "" {
		return "diagnosis:"
	}
	return "diagnosis: " + d.Reason
}
