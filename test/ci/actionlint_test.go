// Package ci tests khook's CI surface from the outside: the action
// metadata, the example workflows (linted with actionlint, which checks
// with: inputs against action.yml), the built binary run the way a runner
// runs it, and the container image.
package ci

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"

	khookci "github.com/khook/khook/internal/ci"
)

// repoRoot is two levels up from test/ci.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

type actionMeta struct {
	Name     string `yaml:"name"`
	Branding struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"outputs"`
	Runs struct {
		Using string   `yaml:"using"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
	} `yaml:"runs"`
}

func TestActionMetadataMatchesTheContract(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionMeta
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	// The published image, by release tag (test/release checks which one).
	if a.Runs.Using != "docker" || !publishedImage.MatchString(a.Runs.Image) || len(a.Runs.Args) != 1 || a.Runs.Args[0] != "ci" {
		t.Errorf("runs: %+v, want a Docker container action running `khook ci` in %s", a.Runs, publishedImage)
	}
	if a.Branding.Icon == "" || a.Branding.Color == "" {
		t.Error("action.yml needs branding")
	}
	for _, name := range khookci.InputNames() {
		in, ok := a.Inputs[name]
		if !ok {
			t.Errorf("input %s is missing from action.yml", name)
			continue
		}
		if in.Description == "" || in.Default == nil {
			t.Errorf("input %s needs a description and a default", name)
		}
	}
	if len(a.Inputs) != len(khookci.InputNames()) {
		t.Errorf("action.yml has %d inputs, khook ci reads %d", len(a.Inputs), len(khookci.InputNames()))
	}
	for _, name := range khookci.OutputNames() {
		if out, ok := a.Outputs[name]; !ok || out.Description == "" {
			t.Errorf("output %s is missing or undescribed in action.yml", name)
		}
	}
	if len(a.Outputs) != len(khookci.OutputNames()) {
		t.Errorf("action.yml has %d outputs, khook ci writes %d", len(a.Outputs), len(khookci.OutputNames()))
	}
}

var (
	publishedImage = regexp.MustCompile(`^docker://ghcr\.io/khook/khook:v\d+\.\d+\.\d+$`)
	// actionRef is how the examples and docs use the published action.
	actionRef = regexp.MustCompile(`khook/khook@v[0-9][0-9A-Za-z.-]*`)
)

// lintProject lays out a repository with action.yml at its root and the
// workflows under .github/workflows, the published action reference
// (khook/khook@vX.Y.Z) pointing at the local action so actionlint reads its
// inputs, and returns actionlint's errors.
func lintProject(t *testing.T, workflows map[string]string) []*actionlint.Error {
	t.Helper()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	wfDir := filepath.Join(dir, ".github", "workflows")
	if err := os.MkdirAll(wfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"action.yml"} {
		data, err := os.ReadFile(filepath.Join(repoRoot(t), f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	var paths []string
	for name, content := range workflows {
		p := filepath.Join(wfDir, name)
		os.WriteFile(p, []byte(actionRef.ReplaceAllString(content, "./")), 0o644)
		paths = append(paths, p)
	}
	return actionlintFiles(t, dir, paths)
}

// actionlintFiles lints workflow files as part of the repository at dir, so
// local `uses: ./` resolve to its action.yml.
func actionlintFiles(t *testing.T, dir string, paths []string) []*actionlint.Error {
	t.Helper()
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{Oneline: true, WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := actionlint.NewProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(paths, proj)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

func TestExampleWorkflowsLint(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "examples", "github")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	workflows := map[string]string{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yml") || strings.HasSuffix(e.Name(), ".yaml") {
			data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			if !actionRef.Match(data) {
				t.Errorf("%s does not use the action", e.Name())
			}
			workflows[e.Name()] = string(data)
		}
	}
	if len(workflows) < 4 {
		t.Fatalf("want the PR plan, apply on merge, nightly drift and fleet examples; found %d", len(workflows))
	}
	for _, e := range lintProject(t, workflows) {
		t.Errorf("%s", e.Error())
	}
}

// The lint must be able to fail: an input action.yml does not declare.
func TestActionlintChecksInputsAgainstActionYml(t *testing.T) {
	wf := `on: push
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - uses: khook/khook@v1
        with:
          comand: plan
`
	errs := lintProject(t, map[string]string{"bad.yml": wf})
	found := false
	for _, e := range errs {
		if strings.Contains(e.Message, "comand") {
			found = true
		}
	}
	if !found {
		t.Errorf("actionlint did not flag the unknown input; errors: %v", errs)
	}
}
