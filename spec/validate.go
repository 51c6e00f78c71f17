package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// validator collects every problem of a decoded spec; it never stops early.
type validator struct {
	s     *Spec
	probs Problems
	bad   map[string]bool // paths the decoder already reported
	typos map[string]bool // fields written misspelt, already reported
}

// errorf records a problem at the position of path (or its nearest parent),
// unless the decoder already reported path or a parent of it: a subtree of
// the wrong type would only produce follow-on noise.
func (v *validator) errorf(path, hint, format string, args ...any) {
	for p := path; ; p = p[:lastDot(p)] {
		if v.bad[p] {
			return
		}
		if lastDot(p) < 0 {
			break
		}
	}
	v.probs = append(v.probs, Problem{Pos: v.s.PosOf(path), Path: path, Message: describe(path) + fmt.Sprintf(format, args...), Hint: hint})
}

func (v *validator) written(path string) bool {
	_, ok := v.s.Positions[path]
	return ok
}

func validate(s *Spec, bad, typos map[string]bool) Problems {
	v := &validator{s: s, bad: bad, typos: typos}
	v.envelope()
	names := v.stepNames()
	for _, st := range s.Steps {
		if !v.bad[st.Path] {
			v.step(st, names)
		}
	}
	v.cycles()
	return v.probs
}

func (v *validator) envelope() {
	s := v.s
	switch {
	case !v.written("apiVersion"):
		v.errorf("apiVersion", "add apiVersion: "+APIVersion, "is required")
	case s.APIVersion != APIVersion:
		v.errorf("apiVersion", "", "must be %s, got %q", APIVersion, s.APIVersion)
	}
	switch {
	case !v.written("kind"):
		v.errorf("kind", "add kind: "+Kind, "is required")
	case s.Kind != Kind:
		v.errorf("kind", "", "must be %s, got %q", Kind, s.Kind)
	}
	if s.Metadata.Name == "" {
		v.errorf("metadata.name", "add metadata: {name: my-bootstrap}", "is required")
	} else if msg := checkSubdomain(s.Metadata.Name, 253-len("khook-state-")); msg != "" {
		v.errorf("metadata.name", "", "%s", msg)
	}
	v.schedule("defaults", s.Defaults.Retries, s.Defaults.OnError)
	v.onImmutable("defaults.onImmutable", s.Defaults.OnImmutable)
	if st := s.State; st != nil {
		if msg := checkLabel(st.Namespace); msg != "" {
			v.errorf("state.namespace", "", "%s", msg)
		}
		if msg := checkSubdomain(st.Name, 253); msg != "" && st.Name != "" {
			v.errorf("state.name", "", "%s", msg)
		}
	}
	v.ignore("ignore", s.Ignore)
	if len(s.Steps) == 0 {
		v.errorf("steps", "add at least one step under steps:", "a spec needs at least one step")
	}
}

// schedule checks retries and onError at path (a step, or defaults).
func (v *validator) schedule(path string, retries *int, onError string) {
	if retries != nil && *retries < 0 {
		v.errorf(path+".retries", "", "must be 0 or more, got %d", *retries)
	}
	if onError != "" && onError != OnErrorFail && onError != OnErrorContinue {
		v.errorf(path+".onError", "", "must be fail or continue, got %q", onError)
	}
}

// onImmutable checks an onImmutable value at path.
func (v *validator) onImmutable(path, value string) {
	if value != "" && value != OnImmutableFail && value != OnImmutableRecreate {
		v.errorf(path, "", "must be fail or recreate, got %q", value)
	}
}

// stepNames validates names and returns the first step of each name.
func (v *validator) stepNames() map[string]*Step {
	names := map[string]*Step{}
	for _, st := range v.s.Steps {
		switch {
		case v.bad[st.Path]:
			continue
		case st.Name == "":
			v.errorf(st.Path+".name", "every step needs a name: lowercase letters, digits and '-'", "steps[%d] has no name", st.Index)
			continue
		case checkLabel(st.Name) != "":
			v.errorf(st.Path+".name", "", "step name %s", checkLabel(st.Name))
		}
		if first, dup := names[st.Name]; dup {
			v.errorf(st.Path+".name", "step names must be unique", "duplicate step name %q (first used at line %d)", st.Name, v.s.PosOf(first.Path+".name").Line)
			continue
		}
		names[st.Name] = st
	}
	return names
}

func (v *validator) step(st *Step, names map[string]*Step) {
	p := st.Path
	seen := map[string]bool{}
	for i, n := range st.Needs {
		np := fmt.Sprintf("%s.needs.%d", p, i)
		switch {
		case n == st.Name:
			v.errorf(np, "", "step %q needs itself", st.Name)
		case names[n] == nil:
			hint := ""
			if s := suggest(n, stepNameList(v.s)); s != "" {
				hint = fmt.Sprintf("did you mean %q?", s)
			}
			v.errorf(np, hint, "needs %q, but no step has that name", n)
		case seen[n]:
			v.errorf(np, "", "needs %q twice", n)
		}
		seen[n] = true
	}
	for _, k := range slices.Sorted(maps.Keys(st.Labels)) {
		if msg := checkLabelKey(k); msg != "" {
			v.errorf(p+".labels."+k, "", "%s", msg)
		} else if msg := checkLabelValue(k, st.Labels[k]); msg != "" {
			v.errorf(p+".labels."+k, "", "%s", msg)
		}
	}
	var retries *int
	if v.written(p + ".retries") {
		retries = &st.Retries
	}
	onError := ""
	if v.written(p + ".onError") {
		onError = st.OnError
	}
	v.schedule(p, retries, onError)
	if v.written(p + ".onImmutable") {
		v.onImmutable(p+".onImmutable", st.OnImmutable)
		if st.Helm == nil && st.Apply == nil {
			v.errorf(p+".onImmutable", "remove onImmutable, or set it on the helm or apply step that writes the object", "only helm and apply steps replace objects")
		}
	}
	v.stepIgnore(st)
	v.pruneStep(st)
	v.crdsOnly(p, st)

	var keys []string
	misspelt := false
	for _, t := range StepTypes {
		if v.written(p + "." + t) {
			keys = append(keys, t)
		}
		misspelt = misspelt || v.typos[p+"."+t]
	}
	switch len(keys) {
	case 0:
		if misspelt {
			return // "hlem:" is reported with its did-you-mean
		}
		v.errorf(p, "add exactly one of "+strings.Join(StepTypes, ", "), "%s has no action", stepLabel(st))
		return
	case 1:
	default:
		v.errorf(p+"."+keys[1], "split it into separate steps joined by needs:", "%s has %d action keys (%s); a step does exactly one thing", stepLabel(st), len(keys), strings.Join(keys, ", "))
		return
	}
	switch keys[0] {
	case TypeHelm:
		v.helm(p+".helm", st.Helm)
	case TypeApply:
		v.apply(p+".apply", st.Apply)
	case TypeDelete:
		v.delete(p+".delete", st.Delete)
	case TypePatch:
		v.patch(p+".patch", st.Patch)
	case TypeWait:
		v.wait(p+".wait", st.Wait)
	case TypeRollout:
		v.rollout(p+".rollout", st.Rollout)
	case TypeJob:
		v.job(p+".job", st.Job)
	}
}

// stepLabel names a step in messages, by name when it has one.
func stepLabel(st *Step) string {
	if st.Name == "" {
		return fmt.Sprintf("steps[%d]", st.Index)
	}
	return fmt.Sprintf("step %q", st.Name)
}

func stepNameList(s *Spec) []string {
	out := make([]string, 0, len(s.Steps))
	for _, st := range s.Steps {
		out = append(out, st.Name)
	}
	return out
}

// cycles reports each dependency cycle once, naming its steps in order.
func (v *validator) cycles() {
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	byName := map[string]*Step{}
	for _, st := range v.s.Steps {
		if _, dup := byName[st.Name]; !dup && st.Name != "" {
			byName[st.Name] = st
		}
	}
	var stack []string
	var visit func(st *Step)
	visit = func(st *Step) {
		state[st.Name] = active
		stack = append(stack, st.Name)
		for i, n := range st.Needs {
			dep := byName[n]
			if dep == nil || n == st.Name {
				continue
			}
			switch state[n] {
			case unvisited:
				visit(dep)
			case active:
				start := len(stack) - 1
				for stack[start] != n {
					start--
				}
				cycle := append(append([]string{}, stack[start:]...), n)
				v.errorf(fmt.Sprintf("%s.needs.%d", st.Path, i), "remove one of these needs edges",
					"dependency cycle: %s", strings.Join(cycle, " → "))
			}
		}
		stack = stack[:len(stack)-1]
		state[st.Name] = done
	}
	for _, st := range v.s.Steps {
		if byName[st.Name] == st && state[st.Name] == unvisited {
			visit(st)
		}
	}
}
