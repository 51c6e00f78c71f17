package importer

import (
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

func inline(text string) *OutApply { return &OutApply{Manifests: []OutSource{{Inline: text}}} }

// checkModel: a step whose objects the check refuses whatever the values;
// one it refuses only with the stand-in "x" of the required variable it
// reads; one under a when: that does not hold with the defaults; and one
// it accepts.
func checkModel() *Model {
	req := &Var{Name: "REQ", Required: true}
	env := "dev"
	return &Model{Source: "install.sh", Tool: "khook import script", Name: "t", Vars: []*Var{req, {Name: "ENV", Default: &env}},
		Steps: []*Step{
			{From: Loc{File: "install.sh", Line: 2}, Out: &OutStep{Name: "removed", Apply: inline("kind: Old\n")}},
			{From: Loc{File: "install.sh", Line: 3}, Out: &OutStep{Name: "uses-req", Needs: []string{"removed"}, Apply: inline("kind: Value\nv: ${REQ}\n")}},
			{From: Loc{File: "install.sh", Line: 4}, Out: &OutStep{Name: "prod-only", Needs: []string{"uses-req"}, When: `vars.get("ENV", "dev") == "prod"`, Apply: inline("kind: Old\n")}},
			{From: Loc{File: "install.sh", Line: 5}, Out: &OutStep{Name: "fine", Needs: []string{"prod-only"}, Apply: inline("kind: Fine\n")}},
		}}
}

// fakeCheck refuses kind Old, and kind Value when its v is x.
func fakeCheck(s *spec.Spec) spec.Problems {
	var ps spec.Problems
	for _, st := range s.Steps {
		if st.Excluded() {
			continue
		}
		text := st.Apply.Manifests[0].Inline
		path := st.Path + ".apply.manifests.0"
		switch {
		case strings.Contains(text, "kind: Old"):
			ps = append(ps, spec.Problem{Path: path, Message: "old.example/v1beta1 Old was removed in v1.22: use old.example/v1"})
		case strings.Contains(text, "v: x\n"):
			ps = append(ps, spec.Problem{Path: path, Message: `v: "x" is not a number`})
		}
	}
	return ps
}

// The import runs khook validate's check (#46): a step it refuses is
// dropped with the check's reason, also one under a when: that the
// defaults do not hold (another value runs it); a problem only the
// stand-in value of a required variable causes drops nothing, and is
// said once.
func TestWriteCheckedDropsWhatValidateRefuses(t *testing.T) {
	m := checkModel()
	found := map[Finding][]string{}
	drop := func(m *Model, probs []Problem, by Finding) bool {
		gone := map[int]bool{}
		for _, p := range probs {
			i := StepOf(p.Path)
			found[by] = append(found[by], m.Steps[i].Out.Name)
			if by == Validating {
				gone[i] = true
				m.NotCarried = append(m.NotCarried, Note{Loc: m.Steps[i].From, What: m.Steps[i].Out.Name, Why: CheckWhy(m, i, p, 0)})
			}
		}
		var kept []*Step
		for i, st := range m.Steps {
			if !gone[i] {
				st.Out.Needs = nil
				kept = append(kept, st)
			}
		}
		m.Steps = kept
		return true
	}
	doc, err := WriteChecked(func() *Model { return m }, drop, fakeCheck)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(found[Validating], ","); got != "removed,prod-only" {
		t.Errorf("refused %s, want removed,prod-only", got)
	}
	if got := strings.Join(found[StandIn], ","); got != "uses-req" {
		t.Errorf("stand-in only %s, want uses-req", got)
	}
	if strings.Contains(string(doc), "name: removed") || !strings.Contains(string(doc), "name: uses-req") || !strings.Contains(string(doc), "name: fine") {
		t.Errorf("spec:\n%s", doc)
	}
	want := "khook validate refuses it: the manifest it applies holds old.example/v1beta1 Old was removed in v1.22: use old.example/v1; the script's own apply fails on a current cluster too: update the manifest and import again"
	if len(m.NotCarried) != 2 || !strings.HasSuffix(m.NotCarried[0].Why, want) {
		t.Errorf("not carried %v, want %q", m.NotCarried, want)
	}
	if why := StandInWhy(m, 0, Problem{Message: `v: "x" is not a number`}); why != `khook validate finds, with stand-in values for REQ: v: "x" is not a number; the values you pass decide it: check it with khook validate --set REQ=…` {
		t.Errorf("stand-in why %q", why)
	}
}

// A check that fails (a problem naming no step) fails the import: it is
// never taken for a pass.
func TestWriteCheckedCheckFailureIsNoPass(t *testing.T) {
	broken := func(*spec.Spec) spec.Problems { return spec.Problems{{Message: "cannot load the built-in schemas"}} }
	_, err := WriteChecked(checkModel, func(*Model, []Problem, Finding) bool { return true }, broken)
	if err == nil || !strings.Contains(err.Error(), "cannot check the spec written as khook validate does (cannot load the built-in schemas)") {
		t.Errorf("err %v", err)
	}
}

// A helm step is written crds: create, which is what helm install and
// upgrade --install do with a chart's crds/ (create the missing ones,
// never upgrade them), not khook's default upgrade; what the source said
// (--skip-crds) stays (trial-46d).
func TestHelmStepsWriteHelmsCRDs(t *testing.T) {
	m := &Model{Source: "install.sh", Tool: "khook import script", Name: "t", Steps: []*Step{
		{From: Loc{File: "install.sh", Line: 2}, Out: &OutStep{Name: "a", Helm: &OutHelm{Chart: "./a"}}},
		{From: Loc{File: "install.sh", Line: 3}, Out: &OutStep{Name: "b", Needs: []string{"a"}, Helm: &OutHelm{Chart: "./b", CRDs: spec.CRDsSkip}}},
	}}
	doc, err := WriteChecked(func() *Model { return m }, func(*Model, []Problem, Finding) bool { return false }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := m.Steps[0].Out.Helm.CRDs, m.Steps[1].Out.Helm.CRDs; a != spec.CRDsCreate || b != spec.CRDsSkip || !strings.Contains(string(doc), "crds: create") {
		t.Errorf("crds %q, %q:\n%s", a, b, doc)
	}
}

// An import that made no step is refused, whatever it named: a spec with
// steps: [] is one validate refuses (trial 46s67k's D1: "import faithful").
func TestNoStepIsRefused(t *testing.T) {
	if v := (&Model{Commands: []Command{{Fate: FateReadOnly}}}).Verdict(); v != Refused {
		t.Errorf("verdict %s, want refused", v)
	}
}
