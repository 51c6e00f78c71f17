package importer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Check is what `khook validate` checks of a loaded spec beyond
// spec.Load: the objects its apply steps apply and its local charts
// render, offline, against the API versions and schemas of the cluster
// (runner/plan.Validate). The command hands it in, as importer imports
// nothing of the runner. Each problem names its step by path
// (steps.N…); one that names none is the check failing.
type Check func(s *spec.Spec) spec.Problems

// Finding is what found the problems WriteChecked hands to its drop.
type Finding int

const (
	// Loading: spec.Load refuses the step (a field, a reference).
	Loading Finding = iota
	// Validating: the check refuses what the step applies or renders.
	Validating
	// StandIn: the check finds the problem only with the stand-in
	// values of the required variables, so the values the user passes
	// decide: the step is kept, and the problem said.
	StandIn
)

// checked runs check on the spec m writes with every step as if its
// when: held (each may run, so each must validate). Of what it finds,
// refused are problems of steps that read no stand-in value, or that a
// second set of stand-in values finds again; standIn those only one set
// finds: the values decide them.
func checked(m *Model, check Check) (refused, standIn []Problem, err error) {
	all := unconditional(m)
	doc, err := Write(all)
	if err != nil {
		return nil, nil, err
	}
	nonEmpty := whenSet(m) // of the steps' own when:, which all clears
	first, err := checkWith(all, doc, check, "x", nonEmpty)
	if err != nil || len(first) == 0 {
		return nil, nil, err
	}
	var again []Problem
	for _, p := range first {
		if len(StandIns(m, StepOf(p.Path))) > 0 {
			// A second set: "1" (a number, a DNS label) where "x" was.
			if again, err = checkWith(all, doc, check, "1", nonEmpty); err != nil {
				again = nil // it does not load with it: the values decide
			}
			break
		}
	}
	for _, p := range first {
		// a removed API version is the chart's or manifest's own, whatever
		// a value (46zza's N7: a 2019 chart's extensions/v1beta1 written
		// with a warning where a second set failed to render it, another
		// chart's refused)
		removed := strings.Contains(p.Message, " was removed in ")
		if removed || len(StandIns(m, StepOf(p.Path))) == 0 || slices.ContainsFunc(again, func(q Problem) bool { return q.Path == p.Path && q.Message == p.Message }) {
			refused = append(refused, p)
		} else {
			standIn = append(standIn, p)
		}
	}
	return refused, standIn, nil
}

// checkWith loads doc with stand for the variables without a value and
// runs check on it.
func checkWith(m *Model, doc []byte, check Check, stand string, nonEmpty map[string]bool) ([]Problem, error) {
	s, probs, err := loadWith(m, doc, stand, nonEmpty)
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("cannot check the spec written as khook validate does, as it does not load with stand-in values (%s)", probs[0])
	}
	found := check(s)
	for _, p := range found {
		if i := StepOf(p.Path); i < 0 || i >= len(m.Steps) {
			return nil, fmt.Errorf("cannot check the spec written as khook validate does (%s), so nothing is written; please report it with the file imported", p)
		}
	}
	return found, nil
}

// unconditional is m with every step's when: cleared (the steps copied).
func unconditional(m *Model) *Model {
	c := *m
	c.Steps = make([]*Step, len(m.Steps))
	for i, st := range m.Steps {
		out := *st.Out
		out.When = ""
		c.Steps[i] = &Step{From: st.From, Out: &out}
	}
	return &c
}

// StepOf is the index of the step a problem's path names (steps.N…), or
// -1.
func StepOf(path string) int {
	var i int
	if _, err := fmt.Sscanf(path, "steps.%d", &i); err != nil || i < 0 {
		return -1
	}
	return i
}

// StandIns are the variables without a value at import (required, or
// secret) that step i reads: the check loads them with stand-in values.
func StandIns(m *Model, i int) []string {
	if i < 0 || i >= len(m.Steps) {
		return nil
	}
	b, _ := json.Marshal(m.Steps[i].Out)
	var out []string
	nonEmpty := whenSet(m)
	for _, v := range m.Vars {
		if (v.Default == nil || v.Secret || nonEmpty[v.Name]) && strings.Contains(string(b), "${"+v.Name+"}") {
			out = append(out, v.Name)
		}
	}
	return out
}

// whenSet are the variables with an empty default that every step
// reading them runs only where they are set: its when: holds, as a
// conjunct, vars.get("V", "") != "" or its negated == "" (kubectl create
// namespace $ns where ns=${NS_OVERRIDE} if set). Checked with that empty
// default, such a step was refused for what no run of it renders (trial
// 46s68j's D1: "Namespace has no metadata.name … fix the manifest").
func whenSet(m *Model) map[string]bool {
	out := map[string]bool{}
	for _, v := range m.Vars {
		if v.Default == nil || *v.Default != "" || v.Secret {
			continue
		}
		ref, set := "${"+v.Name+"}", []string{"vars.get(" + strconv.Quote(v.Name) + `, "") != ""`, "!(vars.get(" + strconv.Quote(v.Name) + `, "") == "")`}
		reads, all := false, true
		for _, st := range m.Steps {
			b, _ := json.Marshal(st.Out)
			if !strings.Contains(string(b), ref) {
				continue
			}
			reads = true
			// a conjunct of the when:, with no || that could hold without it
			conj := strings.Split(st.Out.When, " && ")
			all = all && !strings.Contains(st.Out.When, "||") && slices.ContainsFunc(conj, func(c string) bool { return slices.Contains(set, c) })
		}
		out[v.Name] = reads && all
	}
	return out
}

// CheckWhy is why step i is not carried when the check refuses what it
// applies or renders: what does it, the first problem (and how many
// more), and what to do; the source's own command fails there too when
// the API version was removed.
func CheckWhy(m *Model, i int, p Problem, more int) string {
	st := m.Steps[i].Out
	what, verb, fix := "step "+st.Name+"'s objects", "apply", "its manifests"
	var src *OutSource
	if st.Apply != nil {
		var j int
		if _, err := fmt.Sscanf(strings.TrimPrefix(p.Path, fmt.Sprintf("steps.%d.", i)), "apply.manifests.%d", &j); err == nil && j >= 0 && j < len(st.Apply.Manifests) {
			src = &st.Apply.Manifests[j]
		}
	}
	switch {
	case st.Helm != nil:
		what, verb, fix = "chart "+st.Helm.Chart+" renders", "install", "the chart"
	case src != nil && src.File != "":
		what, fix = "manifest "+src.File+" holds", "the manifest"
	case src != nil && src.Kustomize != "":
		what, fix = "kustomization "+src.Kustomize+" renders", "the kustomization"
	case src != nil:
		what, fix = "the manifest it applies holds", "the manifest"
	}
	// khook validate's refusal first: the message may end in its own
	// advice ("vendor the base locally"), which a clause after it blurred
	// (trial 46zw's N7: "…locally, which khook validate refuses")
	why := "khook validate refuses it: " + what + " " + p.Message
	if more > 0 {
		why += " (and " + words.Count(more, "more problem", "more problems") + ")"
	}
	source := "script"
	if strings.Contains(m.Tool, "helmfile") {
		source = "helmfile"
	}
	if strings.Contains(p.Message, " was removed in ") {
		return why + "; the " + source + "'s own " + verb + " fails on a current cluster too: update " + fix + " and import again"
	}
	return why + "; fix " + fix + " and import again"
}

// StandInWhy is why a problem the check finds only with stand-in values
// is said, not a reason to drop step i: the values passed decide it.
func StandInWhy(m *Model, i int, p Problem) string {
	vars := StandIns(m, i)
	return "khook validate finds, with stand-in values for " + strings.Join(vars, ", ") + ": " + p.Message +
		"; the values you pass decide it: check it with khook validate --set " + vars[0] + "=…"
}
