package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"go.yaml.in/yaml/v3"

	"github.com/khook/khook/celenv"
)

// Policy is one rule over every change a plan predicts (docs/policies.md):
// Deny or Warn is a CEL expression, true meaning a violation, and Message
// a CEL string expression saying why. Rules come from the spec's
// policies: or from --policy files (Source), are type-checked at load and
// compiled once.
type Policy struct {
	Name    string       `json:"name"`
	Deny    string       `json:"deny,omitempty"`
	Warn    string       `json:"warn,omitempty"`
	Message string       `json:"message,omitempty"`
	Match   *PolicyMatch `json:"match,omitempty"`

	// Source is the file the rule was written in (a spec file or a
	// --policy file); Path its field path ("policies.2") for Spec.PosOf.
	Source string `json:"-"`
	Path   string `json:"-"`

	prg     cel.Program // Deny or Warn
	msg     cel.Program // nil: Message is plain text (literal)
	literal string
}

// PolicyMatch narrows the changes a rule sees; an empty list matches all.
type PolicyMatch struct {
	Kinds      []string `json:"kinds,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
	// Steps are step names or step types (helm, apply, delete ...).
	Steps   []string `json:"steps,omitempty"`
	Actions []string `json:"actions,omitempty"`
}

// Policy effects.
const (
	EffectDeny = "deny"
	EffectWarn = "warn"
)

// Effect is deny or warn.
func (p *Policy) Effect() string {
	if p.Deny != "" {
		return EffectDeny
	}
	return EffectWarn
}

// Expr is the rule's deny: or warn: expression.
func (p *Policy) Expr() string {
	if p.Deny != "" {
		return p.Deny
	}
	return p.Warn
}

// PolicyActions are the actions a rule's action variable and match.actions
// take: the plan's vocabulary for one object (model.Action), and planned for
// an object an offline plan has not assessed against a cluster.
var PolicyActions = []string{"create", "configure", "replace", "delete", "keep", "unchanged", "install", "upgrade", "uninstall", "planned"}

// PolicyStep is the step variable: step.name, step.type.
type PolicyStep struct {
	Name string `cel:"name"`
	Type string `cel:"type"`
}

// PolicyInput is one planned change as a rule sees it. Object is the
// object as the plan would write it (nil for a delete), OldObject as it is
// live (nil for a create), both as the API server's JSON.
type PolicyInput struct {
	Object, OldObject map[string]any
	Action            string
	Step              PolicyStep
	Kind, Namespace   string
}

// policyEnv declares object and oldObject (dyn: null when absent, as in
// the API server's admission CEL), action and step (typed, so step.nmae is
// a compile error), with the strings and lists extensions.
var policyEnv = celenv.New(celenv.RuleCost, []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)},
	ext.NativeTypes(reflect.TypeFor[PolicyStep](), ext.ParseStructTags(true)),
	cel.Variable("object", cel.DynType),
	cel.Variable("oldObject", cel.DynType),
	cel.Variable("action", cel.StringType),
	cel.Variable("step", cel.ObjectType("spec.PolicyStep")),
	ext.Strings(), ext.Lists(), ext.Sets(), cel.OptionalTypes(),
	cel.Function("compareVersions",
		cel.Overload("compare_versions_string_string", []*cel.Type{cel.StringType, cel.StringType}, cel.IntType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				x, errA := chartSemver(fmt.Sprint(a.Value()))
				y, errB := chartSemver(fmt.Sprint(b.Value()))
				if errA != nil || errB != nil {
					return types.NewErr("compareVersions: %q or %q is not a semantic version", a.Value(), b.Value())
				}
				return types.Int(x.Compare(y))
			}))),
)

// compilePolicyExpr type-checks one expression of a rule and wants out.
func compilePolicyExpr(expr string, out *cel.Type) (cel.Program, error) {
	env, err := policyEnv.Get()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		errs := iss.Errors()
		return nil, &exprError{msg: "invalid expression: " + celenv.IssueText(iss), line: errs[0].Location.Line(), col: errs[0].Location.Column()}
	}
	if got := ast.OutputType(); !got.IsExactType(out) && !got.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("the expression evaluates to %s, not a %s", got, out)
	}
	return policyEnv.Program(ast)
}

// plainMessage: a message that does not parse as CEL (or is one bare
// word) and has none of an expression's marks (a leading quote, "+",
// a variable's field) is prose, used as written: "message: PVCs are never
// deleted", "message: don't use latest".
func plainMessage(msg string) bool {
	env, err := policyEnv.Get()
	if err != nil {
		return false
	}
	t := strings.TrimSpace(msg)
	if strings.HasPrefix(t, "'") || strings.HasPrefix(t, `"`) || strings.Contains(t, "+") {
		return false
	}
	for _, v := range []string{"object.", "oldObject.", "step.", "action", "has(", "string(", "format("} {
		if strings.Contains(t, v) {
			return false
		}
	}
	if _, iss := env.Parse(t); iss != nil && iss.Err() != nil {
		return true
	}
	return !strings.ContainsAny(t, " .()[]{}") && t != "object" && t != "oldObject" && t != "step"
}

// compile checks and compiles the rule; each problem carries its field
// path.
func (p *Policy) compile() []Problem {
	var probs []Problem
	field := "deny"
	if p.Deny == "" {
		field = "warn"
	}
	prg, err := compilePolicyExpr(p.Expr(), cel.BoolType)
	if err != nil {
		probs = append(probs, Problem{Path: p.Path + "." + field, Message: fmt.Sprintf("%s.%s: %v", p.Path, field, err)})
	}
	p.prg = prg
	switch {
	case p.Message == "":
		p.literal = fmt.Sprintf("%s %s", p.Name, p.Effect())
	case plainMessage(p.Message):
		p.literal = p.Message
	default:
		msg, err := compilePolicyExpr(p.Message, cel.StringType)
		if err != nil {
			probs = append(probs, Problem{Path: p.Path + ".message", Message: fmt.Sprintf("%s.message: %v", p.Path, err)})
		}
		p.msg = msg
	}
	return probs
}

// Matches reports whether the rule's match: selects the change.
func (p *Policy) Matches(in *PolicyInput) bool {
	m := p.Match
	if m == nil {
		return true
	}
	if len(m.Kinds) > 0 && !slices.ContainsFunc(m.Kinds, func(k string) bool { return strings.EqualFold(k, in.Kind) }) {
		return false
	}
	if len(m.Namespaces) > 0 && !slices.Contains(m.Namespaces, in.Namespace) {
		return false
	}
	if len(m.Steps) > 0 && !slices.Contains(m.Steps, in.Step.Name) && !slices.Contains(m.Steps, in.Step.Type) {
		return false
	}
	if len(m.Actions) > 0 && !slices.Contains(m.Actions, in.Action) {
		return false
	}
	return true
}

// ErrPolicyCost is an evaluation over the cost limit.
var ErrPolicyCost = errors.New("the rule exceeds its CEL cost limit")

// Eval runs the rule on one change: whether it is violated and its
// message. A field the object does not have (no such key) is no
// violation: the rule does not apply to it. Any other error, the cost
// limit first, is returned: the caller refuses the change.
func (p *Policy) Eval(in *PolicyInput) (bool, string, error) {
	if p.prg == nil {
		return false, "", fmt.Errorf("rule %s is not compiled", p.Name)
	}
	act := map[string]any{"object": nullable(in.Object), "oldObject": nullable(in.OldObject), "action": in.Action, "step": in.Step}
	out, _, err := p.prg.Eval(act)
	if err != nil {
		if absentField(err) {
			return false, "", nil
		}
		return false, "", evalErr(err)
	}
	if b, ok := out.Value().(bool); !ok || !b {
		return false, "", nil
	}
	if p.msg == nil {
		return true, p.literal, nil
	}
	m, _, err := p.msg.Eval(act)
	if err != nil {
		if absentField(err) {
			return true, p.Name + ": " + err.Error(), nil
		}
		return true, "", evalErr(err)
	}
	s, ok := m.Value().(string)
	if !ok {
		return true, fmt.Sprint(m.Value()), nil
	}
	return true, s, nil
}

// chartSemver parses a version, or the version a helm.sh/chart label ends
// with ("cilium-1.18.4": 1.18.4): the first "-" followed by what parses.
func chartSemver(s string) (*semver.Version, error) {
	if v, err := semver.NewVersion(s); err == nil {
		return v, nil
	}
	for i := 1; i < len(s); i++ {
		if s[i-1] == '-' {
			if v, err := semver.NewVersion(s[i:]); err == nil {
				return v, nil
			}
		}
	}
	return nil, fmt.Errorf("%q is not a version", s)
}

func nullable(m map[string]any) any {
	if m == nil {
		return types.NullValue
	}
	return m
}

func absentField(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "no such key") || strings.HasPrefix(msg, "no such attribute") || strings.Contains(msg, "unsupported index type 'null_type'") || strings.Contains(msg, "on type 'null_type'")
}

func evalErr(err error) error {
	if strings.Contains(err.Error(), "cost limit") || strings.Contains(err.Error(), "operation cancelled: actual cost") {
		return ErrPolicyCost
	}
	return err
}

// checkPolicies validates and compiles every rule (the spec's and the
// --policy files'): a name, exactly one of deny and warn, expressions that
// type-check, known actions. Errors point into the expression when it is
// written on one line.
func checkPolicies(s *Spec, pms map[string]*posMap) Problems {
	var probs Problems
	names := map[string]string{}
	add := func(path, hint, format string, args ...any) {
		probs = append(probs, Problem{Pos: s.PosOf(path), Path: path, Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	for _, p := range s.Policies {
		switch {
		case p.Name == "":
			add(p.Path+".name", "name the rule: it is how a violation names it", "%s.name: is required", p.Path)
		case names[p.Name] != "":
			add(p.Path+".name", "", "%s.name: %q is already the name of %s", p.Path, p.Name, names[p.Name])
		default:
			names[p.Name] = p.Path
		}
		if (p.Deny == "") == (p.Warn == "") {
			add(p.Path, "deny: fails the plan, warn: only warns", "%s: set exactly one of deny and warn", p.Path)
			continue
		}
		for _, pr := range p.compile() {
			pos := s.PosOf(pr.Path)
			text := p.Expr()
			if strings.HasSuffix(pr.Path, ".message") {
				text = p.Message
			}
			var ee *exprError
			if errors.As(errFromProblem(pr, p), &ee) && ee.line == 1 {
				if pm := pms[pos.File]; pm != nil && pm.writtenAt(pos, text) {
					pos.Col += min(ee.col, len([]rune(text)))
				}
			}
			pr.Pos = pos
			pr.Hint = "a rule sees object, oldObject (null when absent), action (a string) and step (step.name, step.type)"
			probs = append(probs, pr)
		}
		if m := p.Match; m != nil {
			for i, a := range m.Actions {
				if !slices.Contains(PolicyActions, a) {
					add(fmt.Sprintf("%s.match.actions.%d", p.Path, i), "one of "+strings.Join(PolicyActions, ", "), "%s.match.actions.%d: unknown action %q", p.Path, i, a)
				}
			}
			for i, st := range m.Steps {
				if s.Step(st) == nil && !slices.Contains(StepTypes, st) {
					add(fmt.Sprintf("%s.match.steps.%d", p.Path, i), "a step's name or a step type ("+strings.Join(StepTypes, ", ")+")", "%s.match.steps.%d: no step or step type is named %q", p.Path, i, st)
				}
			}
		}
	}
	return probs
}

// errFromProblem recompiles the failing expression to get its exprError
// (the problem keeps only the text).
func errFromProblem(pr Problem, p *Policy) error {
	text, out := p.Expr(), cel.BoolType
	if strings.HasSuffix(pr.Path, ".message") {
		text, out = p.Message, cel.StringType
	}
	_, err := compilePolicyExpr(text, out)
	return err
}

// AdmissionDoc is one document of a --policy file that is not khook rules:
// a ValidatingAdmissionPolicy, its binding, or a params object, as JSON
// (runner/policy decodes and evaluates them with the API server's own
// admission CEL).
type AdmissionDoc struct {
	File   string
	Line   int
	Object map[string]any
	// Positions are where each value of the document is written, by field
	// path ("spec.validations.0.expression").
	Positions map[string]Pos
}

// PosOf is where the value at path is written in the document, or the
// document's start when path is not written there.
func (d AdmissionDoc) PosOf(path string) Pos {
	if p, ok := d.Positions[path]; ok {
		return p
	}
	return Pos{File: d.File, Line: d.Line}
}

// nodePositions records the position of n and every value under it by
// field path (path "" is n itself).
func nodePositions(n *yaml.Node, path string, pm *posMap, out map[string]Pos) {
	out[path] = pm.Pos(n.Line, n.Column)
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			nodePositions(n.Content[i+1], join(n.Content[i].Value), pm, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			nodePositions(c, join(strconv.Itoa(i)), pm, out)
		}
	}
}

// policyFile is a --policy file document of khook rules.
type policyFile struct {
	APIVersion string    `json:"apiVersion,omitempty"`
	Kind       string    `json:"kind,omitempty"`
	Policies   []*Policy `json:"policies"`
}

// loadPolicyFiles reads the --policy files into s: khook rules join
// s.Policies (their positions kept under policies.N), every other document
// joins s.Admission. It returns each file's position map.
func loadPolicyFiles(s *Spec, files []string) (map[string]*posMap, Problems) {
	pms := map[string]*posMap{}
	var probs Problems
	read := map[string]bool{}
	for _, file := range files {
		// A file named twice (a fleet's policies and the policies input,
		// say) is read once: its rules are not two rules of one name.
		if a, err := filepath.Abs(file); err == nil && file != "-" {
			if read[a] {
				continue
			}
			read[a] = true
		}
		name, src, err := readSpecFile(file, nil)
		if err != nil {
			probs = append(probs, Problem{Pos: Pos{File: file}, Message: fmt.Sprintf("--policy %s: %v", file, err)})
			continue
		}
		pm := &posMap{file: name, orig: src, out: src, segs: []segment{{literal: true, n: len(src)}}}
		pms[name] = pm
		s.PolicyFiles = append(s.PolicyFiles, name)
		dec := yaml.NewDecoder(bytes.NewReader(src))
		docs := 0
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				if !errors.Is(err, io.EOF) {
					probs = append(probs, yamlProblem(err, pm, name))
				}
				break
			}
			root := &doc
			if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
				root = root.Content[0]
			}
			if root.Kind != yaml.MappingNode {
				if root.Kind != 0 && !(root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
					probs = append(probs, Problem{Pos: pm.Pos(root.Line, root.Column), Message: "a policy file's document is a map: khook rules (policies: [...]) or a Kubernetes object"})
				}
				continue
			}
			docs++
			if mapKey(root, "policies") != nil {
				probs = append(probs, decodePolicyDoc(s, root, pm)...)
				continue
			}
			var obj map[string]any
			if err := root.Decode(&obj); err != nil {
				probs = append(probs, Problem{Pos: pm.Pos(root.Line, root.Column), Message: err.Error()})
				continue
			}
			at := map[string]Pos{}
			nodePositions(root, "", pm, at)
			s.Admission = append(s.Admission, AdmissionDoc{File: name, Line: root.Line, Object: jsonCompatible(obj).(map[string]any), Positions: at})
		}
		if docs == 0 && len(probs) == 0 {
			probs = append(probs, Problem{Pos: Pos{File: name}, Message: "the policy file is empty: write khook rules (policies: [...]) or ValidatingAdmissionPolicy manifests"})
		}
	}
	return pms, probs
}

func mapKey(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// decodePolicyDoc decodes a document of khook rules strictly and appends
// them to s.Policies, their positions renumbered after the rules before.
func decodePolicyDoc(s *Spec, root *yaml.Node, pm *posMap) Problems {
	var f policyFile
	pos := map[string]Pos{}
	d := &decoder{pm: pm, pos: pos, bad: map[string]bool{}, typos: map[string]bool{}}
	d.decode(root, nil, "", reflect.ValueOf(&f).Elem())
	probs := d.probs
	if f.APIVersion != "" && f.APIVersion != APIVersion {
		probs = append(probs, Problem{Pos: pos["apiVersion"], Path: "apiVersion", Message: fmt.Sprintf("apiVersion: must be %s, got %q", APIVersion, f.APIVersion)})
	}
	base := len(s.Policies)
	for k, p := range pos {
		rest, ok := strings.CutPrefix(k, "policies.")
		if !ok {
			continue
		}
		idx, tail, _ := strings.Cut(rest, ".")
		var i int
		if _, err := fmt.Sscanf(idx, "%d", &i); err != nil {
			continue
		}
		nk := fmt.Sprintf("policies.%d", base+i)
		if tail != "" {
			nk += "." + tail
		}
		s.Positions[nk] = p
	}
	for i, p := range f.Policies {
		if p == nil {
			continue
		}
		p.Path = fmt.Sprintf("policies.%d", base+i)
		p.Source = pm.file
		s.Policies = append(s.Policies, p)
	}
	return probs
}

// jsonCompatible turns YAML's map[string]any tree into JSON's types (ints
// as int64, nested maps string-keyed), as the API server would decode it.
func jsonCompatible(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = jsonCompatible(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = jsonCompatible(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = jsonCompatible(e)
		}
		return t
	case int:
		return int64(t)
	}
	return v
}

// loadPolicies names the spec's own rules, reads the --policy files and
// checks every rule.
func loadPolicies(s *Spec, ft *fileTree, files []string) Problems {
	for i, p := range s.Policies {
		if p == nil {
			continue
		}
		p.Path = fmt.Sprintf("policies.%d", i)
		p.Source = s.PosOf(p.Path).File
	}
	s.Policies = slices.DeleteFunc(s.Policies, func(p *Policy) bool { return p == nil })
	pms, probs := loadPolicyFiles(s, files)
	for _, m := range ft.maps() {
		pms[m.file] = m
	}
	return append(probs, checkPolicies(s, pms)...)
}
