package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Change is what a step did to one object or release, the way
// fluxcd/pkg/ssa's ChangeSet reports an apply: the action and the object.
type Change struct {
	Action    Did    `json:"action"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Failed: the step wrote this and then failed (a release left failed).
	Failed bool `json:"failed,omitempty"`
}

// KindRelease is a Helm release's Kind in changes and plans.
const KindRelease = "HelmRelease"

// changing are the actions, predicted or done, that change the declared
// state of the cluster. A job that runs again and a rollout restart act on
// every apply and are not changes: otherwise a converged spec would plan
// changes, drift and comment forever. This is the one definition of "a
// change": Plan.Changes, Results.Changes, the changes output, comment:
// on-change, the verdicts, totals, JUnit and the Terraform report use it.
var changing = map[string]bool{
	string(ActionInstall): true, string(ActionUpgrade): true, string(ActionCreate): true, string(ActionConfigure): true, string(ActionDelete): true, string(ActionUninstall): true, string(ActionReplace): true,
	string(DidInstall): true, string(DidUpgrade): true, string(DidCreate): true, string(DidConfigure): true, string(DidDelete): true, string(DidUninstall): true, string(DidReplace): true,
}

// IsChange reports whether an action, predicted or done, changes the
// declared state of the cluster.
func IsChange[A Action | Did](action A) bool { return changing[string(action)] }

// Changed reports whether the step changed anything.
func (s StepResult) Changed() bool {
	for _, c := range s.Changes {
		if IsChange(c.Action) {
			return true
		}
	}
	return false
}

// StepsChanged reports whether any step changed anything; apply and
// destroy set Results.Changes from it.
func StepsChanged(steps []StepResult) bool {
	for _, s := range steps {
		if s.Changed() {
			return true
		}
	}
	return false
}

// Changed reports whether the run changed anything.
func (r *Results) Changed() bool { return StepsChanged(r.Steps) }

// MarshalJSON writes the document with Changes derived from the steps, so
// the JSON's "changes" cannot disagree with them.
func (r Results) MarshalJSON() ([]byte, error) {
	type plain Results
	p := plain(r)
	p.Changes = r.Changed()
	return json.Marshal(p)
}

// didOrder is the order totals list actions in.
var didOrder = []Did{DidInstall, DidUpgrade, DidCreate, DidConfigure, DidReplace, DidDelete, DidUninstall, DidRun, DidRestart, DidUnchanged}

// ChangeTotals counts what the steps did per step type:
// "Apply: 2 created, 1 configured, 14 unchanged; Helm: 1 upgraded"; "" when
// no step reported an object. What a failed step left behind is named:
// "Helm: 1 installed (failed: shop/web)".
func ChangeTotals(steps []StepResult) string {
	counts := map[string]map[Did]int{}
	failed := map[string][]string{}
	var types []string
	for _, s := range steps {
		for _, c := range s.Changes {
			if counts[s.Type] == nil {
				counts[s.Type] = map[Did]int{}
				types = append(types, s.Type)
			}
			counts[s.Type][c.Action]++
			if c.Failed {
				failed[s.Type+" "+string(c.Action)] = append(failed[s.Type+" "+string(c.Action)], qualified(c.Namespace, c.Name))
			}
		}
	}
	var parts []string
	for _, t := range types {
		var ws []string
		for _, a := range didOrder {
			if n := counts[t][a]; n > 0 {
				w := fmt.Sprintf("%d %s", n, a)
				if names := failed[t+" "+string(a)]; len(names) > 0 {
					w += " (failed: " + strings.Join(names, ", ") + ")"
				}
				ws = append(ws, w)
			}
		}
		parts = append(parts, TitleCase(t)+": "+strings.Join(ws, ", "))
	}
	return strings.Join(parts, "; ")
}

// ChangesSentence says what a run changed, for summaries, comments and
// the terminal: "Changes: Apply: 2 created, 14 unchanged; Helm: 1
// upgraded." or "No changes (Apply: 16 unchanged)."
func ChangesSentence(r *Results) string {
	totals := ChangeTotals(r.Steps)
	switch {
	case r.Changed():
		return "Changes: " + totals + "."
	case totals != "":
		return "No changes (" + totals + ")."
	}
	return "No changes."
}

// MergeChanges folds a later attempt's changes into an earlier one's: an
// object an earlier attempt changed stays changed when a retry finds it
// unchanged.
func MergeChanges(prev, next []Change) []Change {
	if len(prev) == 0 {
		return next
	}
	type key struct{ kind, ns, name string }
	was := map[key]Did{}
	for _, c := range prev {
		if IsChange(c.Action) {
			was[key{c.Kind, c.Namespace, c.Name}] = c.Action
		}
	}
	out := make([]Change, 0, len(next))
	for _, c := range next {
		k := key{c.Kind, c.Namespace, c.Name}
		if a, ok := was[k]; ok && !IsChange(c.Action) {
			c.Action = a
		}
		delete(was, k)
		out = append(out, c)
	}
	for _, c := range prev { // changed before, not reached by the last attempt
		if a, ok := was[key{c.Kind, c.Namespace, c.Name}]; ok && a == c.Action {
			out = append(out, c)
		}
	}
	return out
}

// String is "created ConfigMap demo/settings".
func (c Change) String() string {
	name := c.Name
	if c.Namespace != "" {
		name = c.Namespace + "/" + c.Name
	}
	return string(c.Action) + " " + c.Kind + " " + name
}
