package planfile

import (
	"fmt"
	"strings"

	"github.com/khook/khook/model"
)

// Changes says, one sentence each, how a fresh plan differs from the
// reviewed one in anything the fingerprint covers; none means the world
// is as reviewed. It compares the same fields Fingerprint hashes.
func (f *File) Changes(now *model.Plan) []string {
	was := f.Plan
	if now == nil || now.Digests == nil || was.Digests == nil {
		return []string{"the fresh plan has no digests to compare (an offline plan cannot be checked)"}
	}
	wd, nd := was.Digests, now.Digests
	switch {
	case wd.Keyed != nd.Keyed:
		return []string{fmt.Sprintf("the plan was made %s the plan key (%s) and this run %s it: set the same %s for plan and apply",
			withOrWithout(wd.Keyed), KeyEnv, hasOrNot(nd.Keyed), KeyEnv)}
	case wd.KeyCheck != nd.KeyCheck:
		return []string{fmt.Sprintf("%s differs from the key the plan was made with: set the same %s for plan and apply", KeyEnv, KeyEnv)}
	}
	var out []string
	if was.Server != now.Server || wd.ClusterUID != nd.ClusterUID {
		out = append(out, fmt.Sprintf("the plan was made for cluster %s (kube-system UID %s); this is %s (kube-system UID %s)",
			orNone(was.Server), orNone(wd.ClusterUID), orNone(now.Server), orNone(nd.ClusterUID)))
	}
	if wd.Spec != nd.Spec {
		out = append(out, fmt.Sprintf("the spec changed: its digest was %s, now %s", short(wd.Spec), short(nd.Spec)))
	}
	out = append(out, inputChanges(wd.Inputs, nd.Inputs)...)
	nowSteps := map[string]model.PlanStep{}
	for _, s := range now.Steps {
		nowSteps[s.Name] = s
	}
	for _, s := range was.Steps {
		n, ok := nowSteps[s.Name]
		delete(nowSteps, s.Name)
		if !ok {
			out = append(out, fmt.Sprintf("step %s: planned %s, now it is not in the spec", s.Name, s.Action))
			continue
		}
		out = append(out, stepChanges(s, n)...)
	}
	for _, s := range now.Steps {
		if _, ok := nowSteps[s.Name]; ok {
			out = append(out, fmt.Sprintf("step %s: not in the plan, %s", s.Name, nowWould(s.Action)))
		}
	}
	if len(out) == 0 && Fingerprint(now) != was.Fingerprint {
		// Changes and Fingerprint cover the same fields; say so if not.
		out = append(out, fmt.Sprintf("the plan's fingerprint was %s, now %s", model.ShortFingerprint(was.Fingerprint), model.ShortFingerprint(Fingerprint(now))))
	}
	return out
}

func inputChanges(was, now []model.InputDigest) []string {
	nowBy := map[string]model.InputDigest{}
	for _, in := range now {
		nowBy[in.Name] = in
	}
	var out []string
	for _, w := range was {
		n, ok := nowBy[w.Name]
		delete(nowBy, w.Name)
		what := "input " + w.Name
		if w.Secret {
			what = "secret input " + w.Name
		}
		switch {
		case !ok:
			out = append(out, what+" is no longer declared")
		case w.Digest != n.Digest || w.Secret != n.Secret:
			out = append(out, what+" has another value than when planned")
		}
	}
	for _, n := range now {
		if _, ok := nowBy[n.Name]; ok {
			out = append(out, "input "+n.Name+" is declared now but was not when planned")
		}
	}
	return out
}

// stepChanges compares one step's prediction: action, then each object
// (by kind, namespace and name) and a helm step's release.
func stepChanges(was, now model.PlanStep) []string {
	var out []string
	if comparedAction(was) != comparedAction(now) {
		out = append(out, fmt.Sprintf("step %s: planned %s, %s%s", was.Name, was.Action, nowWould(now.Action), because(now.Reason)))
	}
	nowObjs := map[string]model.ObjectPlan{}
	for _, o := range now.Objects {
		nowObjs[objKey(o)] = o
	}
	for _, w := range was.Objects {
		n, ok := nowObjs[objKey(w)]
		delete(nowObjs, objKey(w))
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("step %s: planned %s %s%s, now would not touch it", was.Name, w.Action, objRef(w), against(w.Live)))
		case w.Action != n.Action:
			out = append(out, fmt.Sprintf("step %s: planned %s %s%s, %s%s", was.Name, w.Action, objRef(w), against(w.Live), nowWouldObject(n.Action), against(n.Live)))
		case w.Live != n.Live:
			out = append(out, fmt.Sprintf("step %s: planned %s %s%s, now the live object is %s: it changed since the plan", was.Name, w.Action, objRef(w), against(w.Live), liveNow(n.Live)))
		case w.Desired != n.Desired:
			out = append(out, fmt.Sprintf("step %s: planned %s %s as desired digest %s, now the desired object is %s", was.Name, w.Action, objRef(w), short(w.Desired), short(n.Desired)))
		}
	}
	for _, n := range now.Objects {
		if _, ok := nowObjs[objKey(n)]; ok {
			out = append(out, fmt.Sprintf("step %s: would now also %s %s, which the plan did not", was.Name, n.Action, objRef(n)))
		}
	}
	out = append(out, releaseChanges(was.Name, was.Release, now.Release)...)
	return out
}

func releaseChanges(step string, was, now *model.ReleaseDigest) []string {
	if was == nil && now == nil {
		return nil
	}
	if was == nil || now == nil {
		return []string{fmt.Sprintf("step %s: the release was %s when planned and is %s now", step, releaseWord(was), releaseWord(now))}
	}
	var out []string
	if was.Revision != now.Revision {
		out = append(out, fmt.Sprintf("step %s: planned against release revision %d, now it is at revision %d", step, was.Revision, now.Revision))
	}
	if was.Archive != now.Archive {
		out = append(out, fmt.Sprintf("step %s: the chart's bytes differ from the plan's (planned %s, now %s): the version was re-published, a git ref moved, or another chart was fetched", step, orNone(was.Archive), orNone(now.Archive)))
	}
	if was.Chart != now.Chart {
		out = append(out, fmt.Sprintf("step %s: the chart apply would install changed (digest %s, now %s)", step, short(was.Chart), short(now.Chart)))
	}
	if was.Values != now.Values {
		out = append(out, fmt.Sprintf("step %s: the values apply would install changed (digest %s, now %s)", step, short(was.Values), short(now.Values)))
	}
	return out
}

func releaseWord(r *model.ReleaseDigest) string {
	if r == nil {
		return "not assessed"
	}
	return fmt.Sprintf("at revision %d", r.Revision)
}

func objKey(o model.ObjectPlan) string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

func objRef(o model.ObjectPlan) string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

func against(live string) string {
	if live == "" {
		return " (absent)"
	}
	return " against live digest " + short(live)
}

func liveNow(live string) string {
	if live == "" {
		return "absent"
	}
	return "at digest " + short(live)
}

// nowWould says what a step would do now, for an action that is no verb
// too ("now it is unchanged", not "now would unchanged").
func nowWould(a model.Action) string {
	switch a {
	case model.ActionUnchanged:
		return "now it is unchanged"
	case model.ActionNoop:
		return "now it would do nothing"
	case model.ActionSkip:
		return "now it would be skipped"
	case model.ActionExcluded:
		return "now it is excluded (when: false)"
	case model.ActionUnknown:
		return "now it cannot be assessed"
	case model.ActionPlanned:
		return "now it is planned offline only"
	}
	return "now would " + string(a)
}

// nowWouldObject is nowWould for one object of a step.
func nowWouldObject(a model.Action) string {
	if a == model.ActionUnchanged {
		return "now would leave it unchanged"
	}
	return "now would " + string(a) + " it"
}

func because(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}

// short is a digest as people compare it: algorithm and 12 hex digits.
func short(d string) string {
	if d == "" {
		return "(none)"
	}
	if i := strings.IndexByte(d, ':'); i >= 0 && len(d) > i+13 {
		return d[:i+13]
	}
	return d
}

func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func withOrWithout(b bool) string {
	if b {
		return "with"
	}
	return "without"
}

func hasOrNot(b bool) string {
	if b {
		return "has"
	}
	return "does not have"
}

// ChangedError is apply --plan's refusal: the world is not the one the
// plan was reviewed against. Its failure reason is plan-changed.
type ChangedError struct {
	Fingerprint string   // the reviewed plan's
	Now         string   // the fresh plan's
	Changes     []string // one sentence each
}

func (e *ChangedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the plan changed since it was reviewed (fingerprint %s, now %s); nothing was applied:",
		model.ShortFingerprint(e.Fingerprint), model.ShortFingerprint(e.Now))
	for _, c := range e.Changes {
		b.WriteString("\n  - " + c)
	}
	b.WriteString("\nrun khook plan again, review it, and apply that plan")
	return b.String()
}

// FailureReason names the CI contract's failure-reason.
func (e *ChangedError) FailureReason() string { return model.ReasonPlanChanged }
