package helmstep

import (
	"net/http"
	"net/url"
	"testing"

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
