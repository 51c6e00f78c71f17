package helmstep

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rel "helm.sh/helm/v4/pkg/release/v1"

	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/spec"
)

func TestSameValuesIgnoresNumberTypes(t *testing.T) {
	stored := map[string]any{"replicas": float64(2), "a": map[string]any{"b": true}}
	next, err := chartsource.New(nil, ".", nil, chartsource.Options{}).Values().Inline(map[string]any{"replicas": 2, "a": map[string]any{"b": true}})
	if err != nil {
		t.Fatal(err)
	}
	if !SameValues(stored, next) {
		t.Error("2 and 2.0 compared different")
	}
	if !SameValues(nil, map[string]any{}) {
		t.Error("nil and empty values compared different")
	}
	if SameValues(stored, map[string]any{"replicas": float64(3)}) {
		t.Error("different values compared equal")
	}
}

func TestIsWrite(t *testing.T) {
	for _, tc := range []struct {
		method, query string
		want          bool
	}{
		{"GET", "", false}, {"POST", "", true}, {"PATCH", "fieldManager=helm", true},
		{"PATCH", "dryRun=All&fieldManager=helm", false}, {"DELETE", "", true},
	} {
		req := &http.Request{Method: tc.method, URL: &url.URL{RawQuery: tc.query}}
		if got := IsWrite(req); got != tc.want {
			t.Errorf("IsWrite(%s ?%s) = %v, want %v", tc.method, tc.query, got, tc.want)
		}
	}
}

// The reconciler's decision for a release that should be gone
// (decideRemoval), for Plan and Uninstall: an
// installed release is uninstalled; an absent or uninstalled one is nothing
// to do when ignoreNotFound accepts it, else apply's error.
func TestDecideRemoval(t *testing.T) {
	deployed := &rel.Release{Name: "web", Version: 3, Info: &rel.Info{Status: rcommon.StatusDeployed}}
	gone := &rel.Release{Name: "web", Version: 4, Info: &rel.Info{Status: rcommon.StatusUninstalled}}
	for _, tc := range []struct {
		name   string
		last   *rel.Release
		ignore bool
		want   *rel.Release
		err    bool
	}{
		{"installed", deployed, false, deployed, false},
		{"installed, ignoreNotFound", deployed, true, deployed, false},
		{"absent, ignoreNotFound", nil, true, nil, false},
		{"absent", nil, false, nil, true},
		{"uninstalled, ignoreNotFound", gone, true, nil, false},
		{"uninstalled", gone, false, nil, true},
	} {
		d := decideRemoval("web", "apps", tc.last, tc.ignore)
		got, why, err := d.target, d.reason, d.err
		if got != tc.want || (err != nil) != tc.err || (err != nil) != (d.do == doFail) {
			t.Errorf("%s: decideRemoval = %v", tc.name, d)
		}
		if err != nil && err.Error() != "release web not found in namespace apps (set ignoreNotFound: true to accept an absent release)" {
			t.Errorf("%s: error %q", tc.name, err)
		}
		if got == nil && err == nil && why == "" {
			t.Errorf("%s: nothing to do, and no reason why", tc.name)
		}
	}
}

// The reconciler's first questions, before any chart is loaded: skipIf:
// installed skips an installed release (pending or not); a pending one is
// to recover, one decision for apply (which recovers it) and plan (which
// says pending).
func TestDecideSkipAndPending(t *testing.T) {
	pending := &rel.Release{Name: "web", Version: 2, Info: &rel.Info{Status: rcommon.StatusPendingUpgrade}}
	open := func(skipIf string) *Release {
		return &Release{Name: "web", Namespace: "apps", Last: pending, step: &spec.Step{Name: "web", Helm: &spec.Helm{SkipIf: skipIf}}}
	}
	e := &Executor{}
	if d := e.decide(t.Context(), open("installed")); d.do != doSkip || d.reason == "" {
		t.Errorf("skipIf: installed: %+v, want skip with a reason", d)
	}
	if d := e.decide(t.Context(), open("")); d.do != doRecover {
		t.Errorf("pending: %+v, want recover", d)
	}
}

// readCRDs yields a chart's CRDs with where each is read from: crds/
// (subcharts' too) first, then the templates' (cluster-scoped whatever
// they say, other kinds left out); a CRD in both is refused, naming the
// template; without templates it reads crds/ alone.
func TestReadCRDsSaysWhereEachComesFrom(t *testing.T) {
	crd := func(name string) []byte {
		return []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\n")
	}
	sub := &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "sub"}, Files: []*common.File{{Name: "crds/b.yaml", Data: crd("bs.example.com")}}}
	ch := &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "top"}, Files: []*common.File{{Name: "crds/a.yaml", Data: crd("as.example.com")}}}
	ch.AddDependency(sub)
	templates := func(rendered string) func() (string, error) {
		return func() (string, error) { return rendered, nil }
	}
	rendered := "---\n# Source: top/templates/c.yaml\n" + string(crd("cs.example.com")) + "  namespace: x\n---\n# Source: top/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"
	got, err := readCRDs(ch, templates(rendered))
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	for _, c := range got {
		read = append(read, fmt.Sprintf("%s %s %d %q", c.obj.GetName(), c.file, c.from, c.obj.GetNamespace()))
	}
	want := []string{
		fmt.Sprintf("as.example.com top/crds/a.yaml %d \"\"", fromCRDsDir),
		fmt.Sprintf("bs.example.com top/charts/sub/crds/b.yaml %d \"\"", fromCRDsDir),
		fmt.Sprintf("cs.example.com top/templates/c.yaml %d \"\"", fromTemplate),
	}
	if !slices.Equal(read, want) {
		t.Errorf("readCRDs = %q, want %q", read, want)
	}
	if got, err := readCRDs(ch, nil); err != nil || len(got) != 2 {
		t.Errorf("readCRDs without templates = %d CRDs (%v), want the 2 of crds/", len(got), err)
	}
	twice := "---\n# Source: top/templates/a.yaml\n" + string(crd("as.example.com"))
	if _, err := readCRDs(ch, templates(twice)); err == nil || !strings.Contains(err.Error(), "CRD as.example.com is both in the chart's crds/ and rendered by top/templates/a.yaml") {
		t.Errorf("a CRD in crds/ and a template: %v", err)
	}
	// crdGuard reads what an upgrade is about to write with no chart.
	again := rendered + "---\n# Source: top/templates/d.yaml\n" + string(crd("cs.example.com"))
	if _, err := readCRDs(nil, templates(again)); err == nil || err.Error() != "CRD cs.example.com is rendered twice (again by top/templates/d.yaml): keep one" {
		t.Errorf("a CRD rendered twice: %v", err)
	}
	if got, err := readCRDs(nil, templates(rendered)); err != nil || len(got) != 1 || got[0].from != fromTemplate {
		t.Errorf("readCRDs of a rendered manifest alone = %v (%v), want its one CRD", got, err)
	}
}
