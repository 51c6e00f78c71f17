package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The GitLab template's review-then-apply: the plan job saves the plan file
// as an artifact, the apply job is manual and applies that same file.
func TestGitLabTemplateAppliesTheSavedPlan(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "gitlab", "khook.gitlab-ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		Variables map[string]string `yaml:"variables"`
		Artifacts struct {
			Paths []string `yaml:"paths"`
		} `yaml:"artifacts"`
		Rules []struct {
			If   string `yaml:"if"`
			When string `yaml:"when"`
		} `yaml:"rules"`
	}
	var tpl map[string]job
	if err := yaml.Unmarshal(data, &tpl); err != nil {
		t.Fatalf("the template is not YAML: %v", err)
	}
	plan, apply := tpl[".khook-plan"], tpl[".khook-apply"]
	file := plan.Variables["KHOOK_PLAN_FILE"]
	if file == "" || apply.Variables["KHOOK_PLAN_FILE"] != file {
		t.Fatalf("plan saves %q, apply applies %q: they must be one file", file, apply.Variables["KHOOK_PLAN_FILE"])
	}
	saved := false
	for _, p := range append(plan.Artifacts.Paths, tpl[".khook"].Artifacts.Paths...) {
		saved = saved || strings.HasPrefix(file, strings.TrimSuffix(p, "/")+"/")
	}
	if !saved {
		t.Errorf("the plan file %s is not under the plan job's artifact paths", file)
	}
	onDefault := false
	for _, r := range plan.Rules {
		onDefault = onDefault || strings.Contains(r.If, "$CI_DEFAULT_BRANCH")
	}
	if !onDefault {
		t.Error("the plan job must also run on the default branch, where the apply job takes its plan file")
	}
	if len(apply.Rules) == 0 {
		t.Fatal("the apply job has no rules")
	}
	for _, r := range apply.Rules {
		if r.When != "manual" {
			t.Errorf("apply rule %q is not when: manual: a person applies after reviewing the plan", r.If)
		}
	}
}
