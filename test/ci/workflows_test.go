package ci

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// projectWorkflows returns khook's own workflow files.
func projectWorkflows(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, pat := range []string{"*.yml", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join(repoRoot(t), ".github", "workflows", pat))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 3 {
		t.Fatalf("want the ci, release and smoke workflows in .github/workflows; found %v", paths)
	}
	return paths
}

// actionlint over .github/workflows, in the repository itself so that local
// `uses: ./` resolve to action.yml. (The examples are linted in
// TestExampleWorkflowsLint.)
func TestProjectWorkflowsLint(t *testing.T) {
	errs := actionlintFiles(t, repoRoot(t), projectWorkflows(t))
	for _, e := range errs {
		t.Errorf("%s", e.Error())
	}
}

// pinnedUses matches owner/repo[/path]@<40 hex> followed by a `# vX.Y.Z` comment.
var pinnedUses = regexp.MustCompile(`^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}\s+#\s*v\d+\.\d+\.\d+\s*$`)

// unpinnedUses returns, for a workflow's text, every `uses:` that is not
// pinned to a full commit SHA with its version in a comment. Local actions
// (./) and docker:// images are allowed.
func unpinnedUses(text string) ([]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	lines := strings.Split(text, "\n")
	var bad []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == "uses" && v.Kind == yaml.ScalarNode {
					ref := v.Value
					line := ""
					if v.Line-1 < len(lines) {
						line = lines[v.Line-1]
					}
					rest := strings.TrimSpace(line[strings.Index(line, ref)+len(ref):])
					if !strings.HasPrefix(ref, "./") && !strings.HasPrefix(ref, "docker://") && !pinnedUses.MatchString(ref+" "+rest) {
						bad = append(bad, strings.TrimSpace(line))
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	return bad, nil
}

func TestWorkflowActionsArePinnedBySHA(t *testing.T) {
	for _, p := range projectWorkflows(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bad, err := unpinnedUses(string(data))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, b := range bad {
			t.Errorf("%s: %q is not pinned to a full commit SHA with a `# vX.Y.Z` comment", filepath.Base(p), b)
		}
	}
}

// The pin check must be able to fail.
func TestUnpinnedUsesFindsTagsAndShortSHAs(t *testing.T) {
	wf := `on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - uses: actions/setup-go@d35c59a # v5.5.0
      - uses: actions/cache@0057852bfaa89a56745cba8c7296529d2fc39830
      - uses: actions/cache/restore@0057852bfaa89a56745cba8c7296529d2fc39830 # v4.3.0
      - uses: ./
      - uses: docker://ghcr.io/khook/khook:v0.1.0
  b:
    uses: org/repo/.github/workflows/x.yml@main
`
	bad, err := unpinnedUses(wf)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"- uses: actions/checkout@v5", "- uses: actions/setup-go@d35c59a # v5.5.0",
		"- uses: actions/cache@0057852bfaa89a56745cba8c7296529d2fc39830", "uses: org/repo/.github/workflows/x.yml@main"}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("unpinned:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}
