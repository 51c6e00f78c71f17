package importer

import (
	"bytes"
	"errors"
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Write renders the model as a khook spec: a header saying what was not
// carried and what was carried with a difference, the declared variables,
// then the steps, each under a `# from FILE:LINE` comment.
func Write(m *Model) ([]byte, error) {
	var out bytes.Buffer
	header(&out, m)
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v *yaml.Node) {
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	add("apiVersion", scalar(spec.APIVersion))
	add("kind", scalar(spec.Kind))
	meta := &yaml.Node{Kind: yaml.MappingNode}
	// Tagged a string, so a name like 001 is quoted and stays one.
	meta.Content = []*yaml.Node{scalar("name"), {Kind: yaml.ScalarNode, Tag: "!!str", Value: m.Name}}
	add("metadata", meta)
	if len(m.Vars) > 0 {
		add("vars", varsNode(m.Vars))
	}
	steps := &yaml.Node{Kind: yaml.SequenceNode}
	for _, st := range m.Steps {
		n, err := encodeStep(st.Out)
		if err != nil {
			return nil, fmt.Errorf("cannot encode step %s: %w", st.Out.Name, err)
		}
		n.HeadComment = "from " + st.From.String() + st.Call
		steps.Content = append(steps.Content, n)
	}
	add("steps", steps)
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("cannot encode the spec: %w", err)
	}
	return out.Bytes(), nil
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

// varsNode is the vars: block in declaration order, one flow map a line.
func varsNode(vars []*Var) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, v := range vars {
		d := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		kv := func(k string, val *yaml.Node) { d.Content = append(d.Content, scalar(k), val) }
		kv("type", scalar(spec.VarString))
		if v.Format != "" {
			kv("format", scalar(v.Format))
		}
		switch {
		case v.Secret:
			kv("secret", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
			if v.Required {
				// a value the source always had: unset, the run would render ""
				kv("required", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
			}
		case v.Default != nil:
			kv("default", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: *v.Default, Style: yaml.DoubleQuotedStyle})
		case v.Required:
			kv("required", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
		if len(v.RequiredWith) > 0 && !v.Required {
			with := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, n := range v.RequiredWith {
				with.Content = append(with.Content, scalar(n))
			}
			kv("required_with", with)
		}
		if len(v.RequiredWithout) > 0 && !v.Required {
			without := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, n := range v.RequiredWithout {
				without.Content = append(without.Content, scalar(n))
			}
			kv("required_without", without)
		}
		if v.Description != "" {
			kv("description", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v.Description, Style: yaml.DoubleQuotedStyle})
		}
		n.Content = append(n.Content, scalar(v.Name), d)
	}
	return n
}

func header(out *bytes.Buffer, m *Model) {
	fmt.Fprintf(out, "# Imported from %s by %s.\n", m.Source, m.Tool)
	if len(m.Commands) > 0 {
		c := m.Counts()
		fmt.Fprintf(out, "# helm/kubectl commands: %d, of which %d became steps, %d were folded into steps, %d are read-only, %d not carried.\n",
			len(m.Commands), c[FateStep], c[FateFolded], c[FateReadOnly], c[FateNotCarried])
		if other := len(m.NotCarried) - c[FateNotCarried]; other > 0 {
			// The list below also names other commands, flags and conditions: say so, so the counts agree.
			fmt.Fprintf(out, "# Of the %d lines not carried below, %d are such commands and %d are other commands, flags or conditions.\n",
				len(m.NotCarried), c[FateNotCarried], other)
		}
	}
	if len(m.NotCarried) > 0 {
		fmt.Fprintf(out, "# NOT carried over (%d): this spec does not do what the source does until these are resolved by hand:\n", len(m.NotCarried))
		for _, line := range collapse(m.NotCarried) {
			fmt.Fprintf(out, "#   %s\n", line)
		}
	}
	differences, notes := SplitInfo(m.Info)
	if info := collapse(differences); len(info) > 0 {
		fmt.Fprintf(out, "# Carried with a difference (%d):\n", len(info))
		for _, line := range info {
			fmt.Fprintf(out, "#   %s\n", line)
		}
	}
	if notes := collapse(notes); len(notes) > 0 {
		fmt.Fprintf(out, "# Notes, nothing differs (%d):\n", len(notes))
		for _, line := range notes {
			fmt.Fprintf(out, "#   %s\n", line)
		}
	}
}

// Counted is a note and how many times it was said.
type Counted struct {
	Note
	N int
}

// Collapse is each note once, in order, with how many times it was said
// (a loop's turns, a function's calls: `sleep 3` sixty times): the one
// rule for the spec's header and the import's messages.
func Collapse(notes []Note) []Counted {
	var out []Counted
	at := map[Note]int{}
	for _, n := range notes {
		n.What, n.Why = words.OneLine(n.What), words.OneLine(n.Why)
		if i, ok := at[n]; ok {
			out[i].N++
			continue
		}
		at[n] = len(out)
		out = append(out, Counted{n, 1})
	}
	return out
}

// String is the note, with (×N) when it was said N > 1 times.
func (c Counted) String() string {
	if c.N > 1 {
		return fmt.Sprintf("%s (×%d)", c.Note, c.N)
	}
	return c.Note.String()
}

// collapse is the header's lines of notes.
func collapse(notes []Note) []string {
	var lines []string
	for _, c := range Collapse(notes) {
		lines = append(lines, words.OneLine(c.String()))
	}
	return lines
}

// Problem is one thing spec.Load refuses in the spec written.
type Problem = spec.Problem

// Validate loads the written spec as `khook validate` would, with a
// stand-in value for each variable that has no default (secrets through
// the secret prefix), so a problem of the import is found before anything
// is written. Relative file: paths are not read; only the DSL is checked.
func Validate(m *Model, doc []byte) (*spec.Spec, error) {
	s, probs, err := load(m, doc)
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("the spec written is invalid: %s", probs[0])
	}
	return s, nil
}

// Problems is what spec.Load refuses in the spec written, each with the
// path of its field (steps.2.helm.chart), for an importer that can drop
// what it refuses and write again; none when it loads.
func Problems(m *Model, doc []byte) ([]Problem, error) {
	_, probs, err := load(m, doc)
	return probs, err
}

func load(m *Model, doc []byte) (*spec.Spec, spec.Problems, error) {
	return loadWith(m, doc, "x", whenSet(m))
}

// loadWith loads the spec written with stand for each variable that has
// no default and no Example, or whose empty default no step that reads it
// runs with (whenSet).
func loadWith(m *Model, doc []byte, stand string, nonEmpty map[string]bool) (*spec.Spec, spec.Problems, error) {
	var set, env []string
	for _, v := range m.Vars {
		val := stand
		if v.Example != "" {
			val = v.Example
		}
		switch {
		case v.Secret:
			env = append(env, "KHOOK_SECRET_"+v.Name+"="+val)
		case v.Default == nil || nonEmpty[v.Name]:
			set = append(set, v.Name+"="+val)
		}
	}
	s, err := spec.Load(spec.LoadOptions{Files: []string{"-"}, Stdin: bytes.NewReader(doc), StdinDir: m.Dir, Set: set, Environ: env})
	var probs spec.Problems
	if errors.As(err, &probs) {
		return nil, probs, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot check the spec written: %w", err)
	}
	return s, nil, nil
}

// WriteChecked writes the model build makes and checks it as `khook
// validate` would: it loads (spec.Load), then check (nil: none) finds no
// problem in what its steps apply and render. While it does not, drop gets
// the problems (each path steps.N… names the step) and what found them, to
// take out what is refused, naming it not carried, and the model is built
// and written again; drop returns false when it can take nothing out, and
// the problems are then the import's own failure, with nothing written.
// Problems the check finds only with the stand-in values of required
// variables go to drop once as StandIn, to be said; the step stays. A
// check that fails is the import's failure too, never a pass.
func WriteChecked(build func() *Model, drop func(m *Model, probs []Problem, by Finding) bool, check Check) ([]byte, error) {
	said := false
	for {
		m := build()
		asTheTool(m)
		doc, err := Write(m)
		if err != nil || len(m.Steps) == 0 {
			return doc, err
		}
		probs, err := Problems(m, doc)
		if err != nil {
			return nil, err
		}
		by := Loading
		if len(probs) == 0 && check != nil && !said {
			var standIn []Problem
			if probs, standIn, err = checked(m, check); err != nil {
				return nil, err
			}
			by = Validating
			if len(probs) == 0 && len(standIn) > 0 {
				said = true
				drop(m, standIn, StandIn)
				continue
			}
		}
		if len(probs) == 0 {
			return doc, nil
		}
		stepsAtLines(doc, probs)
		if !drop(m, probs, by) {
			return nil, fmt.Errorf("the import made a spec khook refuses (%s), so nothing is written; please report it with the file imported", probs[0])
		}
	}
}

// stepsAtLines gives each problem spec.Load finds at a line of the spec
// written, with no field path (a ${QUERY} no variable declares), the path
// of the step at that line, so drop takes that step out and the import
// goes on, rather than writing nothing (trial 46s68n's D2).
func stepsAtLines(doc []byte, probs []Problem) {
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil || len(root.Content) == 0 {
		return
	}
	top, end := root.Content[0], -1
	var steps *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		switch {
		case top.Content[i].Value == "steps":
			steps = top.Content[i+1]
		case steps != nil && end < 0:
			end = top.Content[i].Line // the key after steps:
		}
	}
	if steps == nil {
		return
	}
	for j, p := range probs {
		if p.Path != "" || p.Pos.Line <= 0 || (end > 0 && p.Pos.Line >= end) {
			continue
		}
		for i, st := range steps.Content {
			if st.Line <= p.Pos.Line && (i+1 == len(steps.Content) || p.Pos.Line < steps.Content[i+1].Line) {
				probs[j].Path = fmt.Sprintf("steps.%d", i)
			}
		}
	}
}
