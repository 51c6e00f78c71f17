package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/khook/khook/"

// TestImportRules holds the layout in DEVELOPERS.md to what the packages
// import, transitively (go list -deps).
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		deps[strings.TrimPrefix(fields[0], module)] = fields[1:]
	}
	// spec may use client-go's jsonpath parser (a leaf: it and a forked
	// text/template, no API machinery, no clients) so validation parses
	// braced wait.for expressions exactly as the runner evaluates them.
	specClientGo := map[string]bool{"k8s.io/client-go/util/jsonpath": true, "k8s.io/client-go/third_party/forked/golang/template": true}
	rules := []struct {
		pkg    string // a package, or a prefix ending in "/"
		denied func(dep string) bool
		why    string
	}{
		{"spec", func(d string) bool { return strings.HasPrefix(d, "k8s.io/client-go/") && !specClientGo[d] },
			"spec imports no client-go (only the jsonpath parser)"},
		{"spec", khookOutside("spec", "redact", "sops"), "spec stands alone (the redactor and the sops reader of var-files aside)"},
		{"sops", khookOutside("sops", "redact"), "the sops reader is a leaf: spec and runner both use it"},
		{"report", khookOutside("report", "spec", "redact", "sops"), "report renders the results model; it imports no runner"},
		{"runner", khookUnder("internal/cli", "internal/ci"), "the engine never reaches for the CLI or CI layer"},
		{"runner/", khookUnder("internal/cli", "internal/ci"), "the engine never reaches for the CLI or CI layer"},
		{"runner/kube", khookUnder("runner/"), "runner/kube is the bottom layer of the runner"},
		{"runner/steps", khookUnder("runner/plan", "runner/action", "runner/executors", "runner/state"), "executors do not plan, dispatch or keep state"},
		{"runner/helmstep", khookUnder("runner/plan", "runner/action", "runner/executors", "runner/state"), "executors do not plan, dispatch or keep state"},
		{"runner/planfile", khookOutside("runner/planfile", "report", "spec", "redact", "sops"), "the plan file format reads without a cluster (khook show)"},
		{"internal/ci", khookUnder("internal/cli"), "khook ci runs runner/action, not the CLI commands"},
	}
	checked := 0
	for pkg, ds := range deps {
		for _, r := range rules {
			if pkg != r.pkg && !(strings.HasSuffix(r.pkg, "/") && strings.HasPrefix(pkg, r.pkg)) {
				continue
			}
			checked++
			for _, d := range ds {
				if r.denied(d) {
					t.Errorf("%s imports %s: %s", pkg, d, r.why)
				}
			}
		}
	}
	if checked < len(rules) {
		t.Errorf("only %d package checks for %d rules: a package named in a rule is gone", checked, len(rules))
	}
}

// khookOutside denies khook packages other than the allowed ones.
func khookOutside(allowed ...string) func(string) bool {
	return func(d string) bool {
		rel, ok := strings.CutPrefix(d, module)
		if !ok {
			return false
		}
		for _, a := range allowed {
			if rel == a {
				return false
			}
		}
		return true
	}
}

// khookUnder denies the khook packages named or under a prefix ending "/".
func khookUnder(denied ...string) func(string) bool {
	return func(d string) bool {
		rel, ok := strings.CutPrefix(d, module)
		if !ok {
			return false
		}
		for _, p := range denied {
			if rel == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p)) || strings.HasPrefix(rel, p+"/") {
				return true
			}
		}
		return false
	}
}

// TestOneHelmPipeline keeps Helm's rendering, its install and upgrade
// actions and values merging (loader.MergeMaps) in runner/helmstep: plan
// and apply render charts and merge values through it, never on their own.
func TestOneHelmPipeline(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pipeline := map[string]bool{
		"helm.sh/helm/v4/pkg/action": true, "helm.sh/helm/v4/pkg/engine": true,
		"helm.sh/helm/v4/pkg/chart/common/util": true, "helm.sh/helm/v4/pkg/chart/v2/loader": true,
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if pkg == "runner/helmstep" || strings.HasPrefix(pkg, "test/") {
			continue
		}
		for _, d := range fields[1:] {
			if pipeline[d] {
				t.Errorf("%s imports %s: Helm rendering, actions and values merging live in runner/helmstep", pkg, d)
			}
		}
	}
}

// TestOneChangeDecision keeps "does applying this object change it" in one
// place: only runner/kube/change.go compares objects
// (k8s.io/apimachinery/pkg/api/equality), so plan, apply, drift, Helm drift
// and the saved plan's digests cannot drift apart on what counts as a
// change.
func TestOneChangeDecision(t *testing.T) {
	const equality = `"k8s.io/apimachinery/pkg/api/equality"`
	const home = "runner/kube/change.go"
	found := false
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || path == "tools") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if imp.Path.Value != equality {
				continue
			}
			if filepath.ToSlash(path) != home {
				t.Errorf("%s imports %s: compare objects with kube.Decide (%s), the one change decision", path, equality, home)
			} else {
				found = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Errorf("%s no longer imports %s: update this test to where the change decision lives", home, equality)
	}
}
