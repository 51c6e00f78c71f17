package spec

import (
	"reflect"
	"testing"
)

// A helm step's plan line says the action it plans; other step types
// have one summary whatever their plan.
func TestSummaryAsSaysThePlannedAction(t *testing.T) {
	st := &Step{Helm: &Helm{Chart: "app", Version: "2.0.0", Repo: "https://charts.example.com", Release: "web", Namespace: "apps"}}
	for verb, want := range map[HelmVerb]string{
		HelmInstall:   "install chart app 2.0.0 from https://charts.example.com as release web into apps",
		HelmUpgrade:   "upgrade chart app 2.0.0 from https://charts.example.com as release web into apps",
		HelmNoChange:  "no change to chart app 2.0.0 from https://charts.example.com as release web in apps",
		HelmUninstall: "uninstall chart app 2.0.0 from https://charts.example.com as release web from apps",
	} {
		if got := SummaryAs(st, verb); got != want {
			t.Errorf("SummaryAs(%s) = %q, want %q", verb, got, want)
		}
	}
	if SummaryAs(st, HelmInstall) != Summary(st) {
		t.Errorf("Summary = %q, want the install line", Summary(st))
	}
	apply := &Step{Apply: &Apply{Manifests: []Source{{File: "a.yaml"}}}}
	if SummaryAs(apply, HelmUpgrade) != Summary(apply) {
		t.Errorf("an apply step has one summary, got %q and %q", SummaryAs(apply, HelmUpgrade), Summary(apply))
	}
}

// Every DSL step type answers Block; the inputs are the one list the state
// hash, khook files and sops detection read, in spec order.
func TestBlockInputs(t *testing.T) {
	for _, typ := range StepTypes {
		st := stepOfType(typ)
		if b := st.Block(); b == nil || b.StepType() != typ || st.Type() != typ {
			t.Errorf("step of type %s: Block %v", typ, b)
		}
	}
	h := &Step{Helm: &Helm{Chart: "./charts/app", ValuesFrom: []Source{{URL: "https://x"}, {File: "v.yaml"}}}}
	want := []Input{{InputChart, "./charts/app", "helm.chart"}, {InputValues, "v.yaml", "helm.valuesFrom.1"}}
	if got := h.Inputs(); !reflect.DeepEqual(got, want) {
		t.Errorf("helm inputs %+v, want %+v", got, want)
	}
	a := &Step{Apply: &Apply{Namespace: "ns", Manifests: []Source{{Inline: "x"}, {File: "m.yaml"}, {Kustomize: "k/"}}}}
	want = []Input{{InputManifest, "m.yaml", "apply.manifests.1"}, {InputKustomize, "k/", "apply.manifests.2"}}
	if got := a.Inputs(); !reflect.DeepEqual(got, want) {
		t.Errorf("apply inputs %+v, want %+v", got, want)
	}
	if m := a.Manifests(); !m.Applied || m.Namespace != "ns" || len(m.Sources) != 3 || m.Field != "apply.manifests" {
		t.Errorf("apply manifests %+v", m)
	}
}

// A step type that exists only in this test: its block is all spec needs
// of it (the executor and the dispatcher's wiring are runner's).
type echoBlock struct{ Text string }

func (*echoBlock) StepType() string                    { return "echo" }
func (*echoBlock) Inputs() []Input                     { return []Input{{InputManifest, "echo.txt", "echo.file"}} }
func (*echoBlock) ManifestSources() Manifests          { return Manifests{} }
func (*echoBlock) CreatesNamespace() string            { return "" }
func (*echoBlock) HelmRelease() (string, string, bool) { return "", "", false }
func (*echoBlock) Undo(string) *Delete                 { return nil }

func TestBlockOfATestOnlyType(t *testing.T) {
	st := &Step{Name: "hello", Other: &echoBlock{"hi"}}
	if st.Type() != "echo" || len(st.Inputs()) != 1 {
		t.Errorf("type %q inputs %v", st.Type(), st.Inputs())
	}
}

func stepOfType(typ string) *Step {
	switch typ {
	case TypeHelm:
		return &Step{Helm: &Helm{}}
	case TypeApply:
		return &Step{Apply: &Apply{}}
	case TypeDelete:
		return &Step{Delete: &Delete{}}
	case TypePatch:
		return &Step{Patch: &Patch{}}
	case TypeWait:
		return &Step{Wait: &Wait{}}
	case TypeRollout:
		return &Step{Rollout: &Rollout{}}
	}
	return &Step{Job: &Job{}}
}
