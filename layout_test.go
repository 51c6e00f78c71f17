package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/khook/khook/"

// importRule denies a package (or every package under a prefix ending in
// "/") some of its transitive imports.
type importRule struct {
	pkg    string // a package, or a prefix ending in "/"
	denied func(dep string) bool
	why    string
	// breaks is an import that breaks the rule (TestImportRulesCanFail).
	breaks string
}

// importRules is the layout in DEVELOPERS.md and docs/architecture.md.
func importRules() []importRule {
	// spec may use client-go's jsonpath parser (a leaf: it and a forked
	// text/template, no API machinery, no clients) so validation parses
	// braced wait.for expressions exactly as the runner evaluates them.
	specClientGo := map[string]bool{"k8s.io/client-go/util/jsonpath": true, "k8s.io/client-go/third_party/forked/golang/template": true}
	// The renderers (report) sit at the top, beside the CLI: nothing below
	// it draws output.
	noRenderer := khookUnder("report")
	return []importRule{
		{"spec", func(d string) bool { return strings.HasPrefix(d, "k8s.io/client-go/") && !specClientGo[d] },
			"spec imports no client-go (only the jsonpath parser)", "k8s.io/client-go/dynamic"},
		{"spec", khookOutside("spec", "celenv", "redact", "words"), "spec stands alone (the redactor and the CEL environments aside)", module + "model"},
		{"spec", func(d string) bool { return d == module+"sops" || strings.HasPrefix(d, "github.com/getsops/") },
			"spec opens no sops file: a var file is opened through LoadOptions.Decrypt, which keeps the sops library's key services (cloud KMS SDKs, gRPC) out of the DSL's graph and its fuzz targets' instrumented build", module + "sops"},
		{"celenv", khookOutside("celenv"), "the CEL environments are the ground floor: they import nothing of khook", module + "spec"},
		{"celenv", func(d string) bool { return strings.HasPrefix(d, "k8s.io/") }, "the CEL environments import nothing of Kubernetes: spec builds on them", "k8s.io/apiserver/pkg/cel"},
		{"redact", khookOutside("redact"), "the redactor is the ground floor: it imports nothing of khook", module + "spec"},
		{"words", khookOutside("words"), "the helpers of a sentence are the ground floor: they import nothing of khook", module + "spec"},
		{"sops", khookOutside("sops", "redact", "words"), "the sops reader is a leaf: spec and runner both use it", module + "spec"},
		{"model", khookOutside("model", "spec", "celenv", "redact", "words", "sops"), "the results model imports no renderer and no runner", module + "report"},
		{"report", khookOutside("report", "model", "spec", "celenv", "redact", "words", "sops"), "report renders the results model; it imports no runner", module + "runner/kube"},
		{"runner", noRenderer, "no renderer below the CLI: the engine returns the model", module + "report"},
		{"runner/", noRenderer, "no renderer below the CLI: the runner returns the model", module + "report"},
		{"internal/fleet", noRenderer, "no renderer below the CLI: fleets read and build the model", module + "report"},
		{"runner", khookUnder("internal/cli", "internal/ci"), "the engine never reaches for the CLI or CI layer", module + "internal/ci"},
		{"runner/", khookUnder("internal/cli", "internal/ci"), "the engine never reaches for the CLI or CI layer", module + "internal/cli"},
		{"runner/kube", khookOutside("runner/kube", "runner/kube/manifest", "runner/kube/objdiff", "runner/kube/apischema", "model", "spec", "celenv", "redact", "words", "sops"), "runner/kube is the bottom layer of the runner: of khook it imports only its own rooms below it, the model and the ground floor", module + "runner/steps"},
		{"runner/kube", khookUnder("runner/kube/wait"), "the kube core is below its waits: runner/kube/wait imports it and hands it its deletion wait (kube.SetGone)", module + "runner/kube/wait"},
		{"runner/kube/readiness", func(d string) bool { return strings.HasPrefix(d, "k8s.io/client-go/") && !specClientGo[d] },
			"the readiness predicates are pure: they judge objects handed to them with no client", "k8s.io/client-go/dynamic"},
		{"runner/kube/readiness", khookOutside("runner/kube/readiness", "model", "spec", "celenv", "redact", "words", "sops"), "the readiness predicates are below the client: of khook they import only the model and the ground floor", module + "runner/kube"},
		{"runner/kube/apischema", func(d string) bool {
			return strings.HasPrefix(d, "k8s.io/client-go/") && d != "k8s.io/client-go/kubernetes/scheme"
		},
			"schemas and API lifecycles need no cluster: offline validation reads them with no client (the built-in types' scheme aside)", "k8s.io/client-go/kubernetes"},
		{"runner/kube/apischema", khookOutside("runner/kube/apischema", "redact", "words"), "schemas and API lifecycles are below the client and the waits: of khook they import nothing but the ground floor's helpers", module + "runner/kube/wait"},
		{"runner/kube/wait", khookOutside("runner/kube/wait", "runner/kube", "runner/kube/readiness", "runner/kube/manifest", "runner/kube/objdiff", "runner/kube/apischema", "model", "spec", "celenv", "redact", "words", "sops"), "the waits sit on the kube core: of khook they import only runner/kube and its rooms, the model and the ground floor", module + "runner/steps"},
		{"runner/kube/manifest", func(d string) bool { return strings.HasPrefix(d, "k8s.io/client-go/") && !specClientGo[d] }, "manifests load with no client: validate, plan --offline and import read files without a cluster", "k8s.io/client-go/rest"},
		{"runner/kube/manifest", khookOutside("runner/kube/manifest", "spec", "celenv", "redact", "words", "sops"), "manifest loading is below the client: of khook it imports only the ground floor", module + "runner/kube"},
		{"runner/kube/objdiff", func(d string) bool {
			return strings.HasPrefix(d, "k8s.io/client-go/") && d != "k8s.io/client-go/kubernetes/scheme" && !specClientGo[d]
		}, "the change decision is pure: it compares objects and computes patches with no client (the built-in types' scheme aside)", "k8s.io/client-go/dynamic"},
		{"runner/kube/objdiff", khookOutside("runner/kube/objdiff", "model", "spec", "celenv", "redact", "words", "sops"), "the change decision is below the client: of khook it imports only the model and the ground floor", module + "runner/kube"},
		{"runner/steps", khookUnder("runner/plan", "runner/command", "runner/dispatch", "runner/state"), "executors do not plan, dispatch or keep state", module + "runner/plan"},
		{"runner/helmstep", khookUnder("runner/plan", "runner/command", "runner/dispatch", "runner/state"), "executors do not plan, dispatch or keep state", module + "runner/state"},
		{"runner/chartsource", khookUnder("runner/plan", "runner/command", "runner/dispatch", "runner/state", "runner/steps", "runner/helmstep"), "chart sourcing is below the executors and the plan: both use it", module + "runner/helmstep"},
		{"runner/plan", khookUnder("runner/steps", "runner/helmstep", "runner/dispatch", "runner/command", "runner/state"), "runner/plan reaches the executors only through runner.Planner", module + "runner/helmstep"},
		{"runner/policy", khookOutside("runner/policy", "model", "spec", "celenv", "redact", "words", "sops"), "the policies judge the plan's objects: of khook they import only the model and the ground floor", module + "runner/kube"},
		{"runner/planfile", khookOutside("runner/planfile", "model", "spec", "celenv", "redact", "words", "sops"), "the plan file format reads without a cluster (khook show)", module + "runner/kube"},
		{"internal/importer", khookOutside("internal/importer", "spec", "celenv", "redact", "words", "sops"), "the import model and its writer: of khook only the DSL and the ground floor", module + "model"},
		{"internal/helmfile", khookOutside("internal/helmfile", "internal/importer", "internal/shscript", "spec", "celenv", "redact", "words", "sops"), "the helmfile importer produces into the one import model, its hooks through the shell translator; no runner, no CLI", module + "runner/kube"},
		{"internal/shscript", khookOutside("internal/shscript", "internal/importer", "spec", "celenv", "redact", "words", "sops"), "the shell importer produces into the one import model; no runner, no CLI", module + "internal/helmfile"},
		{"internal/ci", khookUnder("internal/cli"), "khook ci runs runner/command, not the CLI commands", module + "internal/cli/cmdutil"},
	}
}

// violations lists what breaks the rules in deps (package, relative to the
// module, to its transitive imports); checked counts the package checks.
func violations(deps map[string][]string, rules []importRule) (errs []string, checked int) {
	for pkg, ds := range deps {
		for _, r := range rules {
			if pkg != r.pkg && !(strings.HasSuffix(r.pkg, "/") && strings.HasPrefix(pkg, r.pkg)) {
				continue
			}
			checked++
			for _, d := range ds {
				if r.denied(d) {
					errs = append(errs, fmt.Sprintf("%s imports %s: %s", pkg, d, r.why))
				}
			}
		}
	}
	sort.Strings(errs)
	return errs, checked
}

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
	rules := importRules()
	errs, checked := violations(deps, rules)
	for _, e := range errs {
		t.Error(e)
	}
	if checked < len(rules) {
		t.Errorf("only %d package checks for %d rules: a package named in a rule is gone", checked, len(rules))
	}
}

// TestImportRulesCanFail shows each rule fails when broken: its package
// (or one under its prefix) importing the rule's breaks is reported, and
// the same package without it is not.
func TestImportRulesCanFail(t *testing.T) {
	for _, r := range importRules() {
		pkg := r.pkg
		if strings.HasSuffix(pkg, "/") {
			pkg += "x"
		}
		broken, _ := violations(map[string][]string{pkg: {"fmt", r.breaks}}, []importRule{r})
		if len(broken) != 1 {
			t.Errorf("rule %q on %s: %s importing %s gives %q, want one violation", r.why, r.pkg, pkg, r.breaks, broken)
		}
		if ok, _ := violations(map[string][]string{pkg: {"fmt"}}, []importRule{r}); len(ok) != 0 {
			t.Errorf("rule %q on %s: a package importing only fmt gives %q", r.why, r.pkg, ok)
		}
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
// actions and values merging (loader.MergeMaps) in runner/helmstep and the
// chart sourcing below it (runner/chartsource: loading, values, the offline
// render): plan and apply render charts and merge values through them,
// never on their own.
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
		if pkg == "runner/helmstep" || pkg == "runner/chartsource" || strings.HasPrefix(pkg, "test/") {
			continue
		}
		for _, d := range fields[1:] {
			if pipeline[d] {
				t.Errorf("%s imports %s: Helm rendering, actions and values merging live in runner/helmstep and runner/chartsource", pkg, d)
			}
		}
	}
}

// TestOneChangeDecision keeps "does applying this object change it" in one
// place: only runner/kube/objdiff/change.go compares objects
// (k8s.io/apimachinery/pkg/api/equality), so plan, apply, drift, Helm drift
// and the saved plan's digests cannot drift apart on what counts as a
// change.
func TestOneChangeDecision(t *testing.T) {
	const equality = `"k8s.io/apimachinery/pkg/api/equality"`
	const home = "runner/kube/objdiff/change.go"
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
				t.Errorf("%s imports %s: compare objects with objdiff.Decide (%s), the one change decision", path, equality, home)
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

// TestArchitecturePackages holds docs/architecture.md to the code: the
// packages its "packages as layers" section names (in backticks) are
// exactly the module's packages, "." for the root.
func TestArchitecturePackages(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## The packages as layers\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## The packages as layers" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(section, -1) {
		if name := m[1]; name == "." || packageName.MatchString(name) {
			named[name] = true
		}
	}
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exists := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, strings.TrimSuffix(module, "/")), "/")
		if rel == "" {
			rel = "."
		}
		exists[rel] = true
		if !named[rel] {
			t.Errorf("docs/architecture.md does not name package %s: add it to its layer", rel)
		}
	}
	for name := range named {
		if !exists[name] {
			t.Errorf("docs/architecture.md names %s, which is no package of the module", name)
		}
	}
}

// packageName is a package path as the architecture page writes it.
var packageName = regexp.MustCompile(`^[a-z][a-z0-9-]*(/[a-z0-9-]+)*$`)

// The import pipeline (issue #46) keeps its functions short: one model,
// one writer, and no function over 100 lines in internal/importer, the
// script translator or the helmfile importer.
func TestImportPipelineFunctionsAreShort(t *testing.T) {
	for _, dir := range []string{"internal/importer", "internal/shscript", "internal/helmfile"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			for name, f := range p.Files {
				for _, d := range f.Decls {
					fd, ok := d.(*ast.FuncDecl)
					if !ok || fd.Body == nil {
						continue
					}
					if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > 100 {
						t.Errorf("%s: func %s is %d lines (at most 100)", name, fd.Name.Name, n)
					}
				}
			}
		}
	}
}
