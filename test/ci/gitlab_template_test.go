package ci

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// component reads the GitLab CI/CD component (templates/khook/template.yml)
// and interpolates its inputs, defaults overridden by inputs, as GitLab does
// on include.
func component(t *testing.T, inputs map[string]string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "templates", "khook", "template.yml"))
	if err != nil {
		t.Fatal(err)
	}
	header, body, ok := strings.Cut(string(data), "\n---\n")
	if !ok {
		t.Fatal("the component has no spec header ending in ---")
	}
	var spec struct {
		Spec struct {
			Inputs map[string]struct {
				Default any `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(header), &spec); err != nil {
		t.Fatalf("the component's spec header is not YAML: %v", err)
	}
	values := map[string]string{}
	for name, in := range spec.Spec.Inputs {
		values[name] = strings.TrimSpace(yamlScalar(in.Default))
	}
	for k, v := range inputs {
		values[k] = v
	}
	var missing []string
	body = regexp.MustCompile(`\$\[\[\s*inputs\.([a-z-]+)\s*\]\]`).ReplaceAllStringFunc(body, func(m string) string {
		name := regexp.MustCompile(`inputs\.([a-z-]+)`).FindStringSubmatch(m)[1]
		v, ok := values[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		t.Fatalf("the component uses inputs its spec does not declare: %v", missing)
	}
	var jobs map[string]any
	if err := yaml.Unmarshal([]byte(body), &jobs); err != nil {
		t.Fatalf("the component's jobs are not YAML: %v", err)
	}
	return jobs
}

func yamlScalar(v any) string {
	if v == nil {
		return ""
	}
	out, _ := yaml.Marshal(v)
	return string(out)
}

// The component's review-then-apply: the plan job saves the plan file as an
// artifact, the apply job is manual, in a later stage (so it gets the plan
// job's artifacts) and applies that same file.
func TestGitLabComponentAppliesTheSavedPlan(t *testing.T) {
	type job struct {
		Stage     string            `yaml:"stage"`
		Variables map[string]string `yaml:"variables"`
		Artifacts struct {
			Paths []string `yaml:"paths"`
		} `yaml:"artifacts"`
		Rules []struct {
			If   string `yaml:"if"`
			When string `yaml:"when"`
		} `yaml:"rules"`
	}
	raw := component(t, nil)
	data, _ := yaml.Marshal(raw)
	var tpl map[string]job
	if err := yaml.Unmarshal(data, &tpl); err != nil {
		t.Fatal(err)
	}
	plan, apply := tpl["khook-plan"], tpl["khook-apply"]
	file := plan.Variables["KHOOK_PLAN_FILE"]
	if file == "" || apply.Variables["KHOOK_PLAN_FILE"] != file {
		t.Fatalf("plan saves %q, apply applies %q: they must be one file", file, apply.Variables["KHOOK_PLAN_FILE"])
	}
	saved := false
	for _, p := range plan.Artifacts.Paths {
		saved = saved || strings.HasPrefix(file, strings.TrimSuffix(p, "/")+"/")
	}
	if !saved {
		t.Errorf("the plan file %s is not under the plan job's artifact paths", file)
	}
	if plan.Stage == apply.Stage {
		t.Errorf("plan and apply share stage %s: the apply job gets the plan's artifacts only from an earlier stage", plan.Stage)
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
	if d := tpl["khook-drift"]; d.Variables["KHOOK_COMMAND"] != "drift" || len(d.Rules) != 1 || !strings.Contains(d.Rules[0].If, `"schedule"`) {
		t.Errorf("the drift job must run drift on scheduled pipelines only: %+v", d)
	}
}

// The old template stays a template: it includes the component with hidden
// jobs, .khook-plan, .khook-apply and .khook-drift.
func TestGitLabTemplateIncludesTheComponent(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "gitlab", "khook.gitlab-ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Include []struct {
			Local  string            `yaml:"local"`
			Inputs map[string]string `yaml:"inputs"`
		} `yaml:"include"`
	}
	if err := yaml.Unmarshal(data, &tpl); err != nil {
		t.Fatalf("the template is not YAML: %v", err)
	}
	if len(tpl.Include) != 1 || tpl.Include[0].Local != "templates/khook/template.yml" {
		t.Fatalf("the template must include the component templates/khook/template.yml, got %+v", tpl.Include)
	}
	jobs := component(t, tpl.Include[0].Inputs)
	for _, name := range []string{".khook-plan", ".khook-apply", ".khook-drift"} {
		if _, ok := jobs[name]; !ok {
			t.Errorf("the template no longer has the hidden job %s that pipelines extend", name)
		}
	}
}
