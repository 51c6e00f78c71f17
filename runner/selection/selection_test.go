package selection

import (
	"strings"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// platform: crds <- cert-manager <- issuers; ingress; web needs
// cert-manager and ingress; smoke needs web.
const platform = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: platform}
steps:
  - name: crds
    labels: {tier: infra}
    wait: {on: ns/default, for: "jsonpath={.metadata.name}=default"}
  - name: cert-manager
    needs: [crds]
    labels: {tier: infra, team: security}
    wait: {on: ns/default, for: "jsonpath={.metadata.name}=default"}
  - name: issuers
    needs: [cert-manager]
    labels: {tier: infra, team: security}
    wait: {on: ns/default, for: "jsonpath={.metadata.name}=default"}
  - name: ingress
    labels: {tier: infra, team: net}
    wait: {on: ns/default, for: "jsonpath={.metadata.name}=default"}
  - name: web
    needs: [cert-manager, ingress]
    labels: {tier: apps, team: shop}
    wait: {on: ns/default, for: "jsonpath={.metadata.name}=default"}
  - name: smoke
    needs: [web]
    wait: {on: ns/default, for: "jsonpath={.metadata.name}=default"}
`

func load(t *testing.T) *spec.Spec {
	t.Helper()
	s, err := spec.Load(spec.LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(platform)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSelect(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  model.Selection
		dir  Direction
		want string
	}{
		{"target brings its needs", model.Selection{Targets: []string{"web"}}, Needs, "crds,cert-manager,ingress,web"},
		{"target-only", model.Selection{Targets: []string{"web"}, TargetOnly: true}, Needs, "web"},
		{"selector", model.Selection{Selector: "team=security"}, Needs, "crds,cert-manager,issuers"},
		{"set selector, target-only", model.Selection{Selector: "team in (net,shop)", TargetOnly: true}, Needs, "ingress,web"},
		{"inequality matches unlabelled", model.Selection{Selector: "tier!=infra", TargetOnly: true}, Needs, "web,smoke"},
		{"exclude alone", model.Selection{Exclude: []string{"smoke"}}, Needs, "crds,cert-manager,issuers,ingress,web"},
		{"exclude from a closure", model.Selection{Targets: []string{"web"}, Exclude: []string{"crds"}}, Needs, "cert-manager,ingress,web"},
		{"destroy brings dependents", model.Selection{Targets: []string{"cert-manager"}}, Dependents, "cert-manager,issuers,web,smoke"},
		{"destroy exclude keeps needs", model.Selection{Targets: []string{"crds"}, Exclude: []string{"web"}}, Dependents, "issuers,smoke"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := load(t)
			got, err := Mark(s, &tc.req, tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Steps, ",") != tc.want {
				t.Fatalf("selected %v, want %s", got.Steps, tc.want)
			}
			for _, st := range s.Steps {
				if sel := strings.Contains(","+tc.want+",", ","+st.Name+","); sel == (st.Skip == spec.SkipNotSelected) {
					t.Errorf("step %s: skip %q, selected %v", st.Name, st.Skip, sel)
				}
			}
			if !got.Partial || got.Total != 6 {
				t.Errorf("partial %v total %d", got.Partial, got.Total)
			}
		})
	}
}

func TestSelectNothingRequested(t *testing.T) {
	s := load(t)
	if got, err := Mark(s, &model.Selection{}, Needs); got != nil || err != nil {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, st := range s.Steps {
		if st.Skip != "" {
			t.Errorf("%s skipped: %s", st.Name, st.Skip)
		}
	}
}

func TestSelectErrors(t *testing.T) {
	for _, tc := range []struct {
		req  model.Selection
		want []string
	}{
		{model.Selection{Targets: []string{"webs"}, Exclude: []string{"smok"}},
			[]string{`--target webs: no step of the spec has that name (did you mean "web"?)`, `--exclude smok: no step of the spec has that name (did you mean "smoke"?)`}},
		{model.Selection{Targets: []string{"web,smoke"}},
			[]string{`--target web,smoke: no step of the spec has that name (a step name holds no comma: repeat --target for each step, --target web --target smoke)`}},
		{model.Selection{Selector: "tier=infa"}, []string{`--selector "tier=infa" matches no step (did you mean "tier=infra"?); the steps' labels are`}},
		{model.Selection{Selector: "tier in ("}, []string{`--selector "tier in (" is not a label selector`}},
		{model.Selection{Exclude: []string{"crds", "cert-manager", "issuers", "ingress", "web", "smoke"}}, []string{"leaves no step to run"}},
		{model.Selection{TargetOnly: true}, []string{"--target-only needs --target or --selector"}},
	} {
		_, err := Mark(load(t), &tc.req, Needs)
		if err == nil {
			t.Fatalf("%+v: no error", tc.req)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error\n%v\nwants %q", tc.req, err, w)
			}
		}
	}
}

func TestNeedsOutside(t *testing.T) {
	s := load(t)
	if _, err := Mark(s, &model.Selection{Targets: []string{"web"}, TargetOnly: true}, Needs); err != nil {
		t.Fatal(err)
	}
	got := NeedsOutside(s, Needs)
	if strings.Join(got["web"], ",") != "cert-manager,ingress" || len(got) != 1 {
		t.Fatalf("needs outside: %v", got)
	}
}
