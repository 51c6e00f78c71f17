package pipelines

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/needtool"
)

// The project that includes the component the way GitLab documents testing
// a component in its own project: $CI_SERVER_FQDN/<project>/<name>@$CI_COMMIT_SHA.
const gitlabCI = `include:
  - component: $CI_SERVER_FQDN/khook/khook/khook@$CI_COMMIT_SHA
    inputs:
      image: %IMAGE%
      identifier: e2e
      vars: NS=%NS%
`

// gitlabProject lays out a git project whose remote is on gitlab.example,
// with the given files and the component at templates/khook/template.yml.
func gitlabProject(t *testing.T, remote string, files map[string]string) string {
	t.Helper()
	proj := t.TempDir()
	copyInto(t, filepath.Join(citest.RepoRoot(), "templates", "khook", "template.yml"), filepath.Join(proj, "templates", "khook", "template.yml"))
	for name, content := range files {
		write(t, filepath.Join(proj, name), content)
	}
	git(t, proj, "init", "-q", "-b", "main")
	git(t, proj, "remote", "add", "origin", "https://gitlab.example/"+remote+".git")
	git(t, proj, "add", "-A")
	git(t, proj, "-c", "user.name=khook-test", "-c", "user.email=test@khook.invalid", "commit", "-q", "-m", "spec")
	return proj
}

// gitlabCILocal runs the pinned gitlab-ci-local in proj (five minutes at
// most) with the pipeline source given, and extra flags.
func gitlabCILocal(t *testing.T, gcl, proj, source string, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gcl, append([]string{"--no-color",
		"--variable", "CI_PIPELINE_SOURCE=" + source, "--ignore-predefined-vars", "CI_PIPELINE_SOURCE,CI_COMMIT_BRANCH,GITLAB_CI"}, args...)...)
	cmd.Dir = proj // gitlab-ci-local takes no absolute --cwd
	cmd.Env = append(env, "HOME="+t.TempDir(), citest.NodePATH(t))
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The old template, as examples/gitlab/.gitlab-ci.yml includes it for a
// fleet, still gives each cluster its plan, manual apply and drift job.
func TestOldGitLabTemplateUnderGitLabCILocal(t *testing.T) {
	gcl := citest.NPMTool(t, "gitlab-ci-local", "gitlab-ci-local")
	files := map[string]string{}
	for _, f := range []string{".gitlab-ci.yml", "khook.gitlab-ci.yml"} {
		data, err := os.ReadFile(filepath.Join(citest.RepoRoot(), "examples", "gitlab", f))
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Join("examples", "gitlab", f)] = string(data)
	}
	files[".gitlab-ci.yml"] = files[filepath.Join("examples", "gitlab", ".gitlab-ci.yml")]
	proj := gitlabProject(t, "acme/infra", files)
	for source, want := range map[string]map[string]string{
		"push":     {"plan: [prod-eu]": "on_success", "apply: [prod-eu]": "manual", "drift: [prod-eu]": "never", "notify": "on_success"},
		"schedule": {"plan: [prod-eu]": "never", "apply: [prod-eu]": "never", "drift: [prod-eu]": "on_success"},
	} {
		out, err := gitlabCILocal(t, gcl, proj, source, os.Environ(), "--list-json")
		if err != nil {
			t.Fatalf("gitlab-ci-local --list-json (%s): %v\n%s", source, err, out)
		}
		var jobs []struct{ Name, When string }
		if err := json.Unmarshal([]byte(out[strings.Index(out, "["):]), &jobs); err != nil {
			t.Fatalf("gitlab-ci-local --list-json (%s): %v\n%s", source, err, out)
		}
		got := map[string]string{}
		for _, j := range jobs {
			got[j.Name] = j.When
		}
		for name, when := range want {
			if got[name] != when {
				t.Errorf("%s pipeline: job %q is %q, want %q (all: %v)", source, name, got[name], when, got)
			}
		}
	}
}

// The component's jobs under gitlab-ci-local with the GitLab job image built
// from the checkout: plan on a merge request, plan then the manual apply of
// the saved plan on the default branch, the nightly drift job on a schedule.
func TestGitLabComponentUnderGitLabCILocal(t *testing.T) {
	gcl := citest.NPMTool(t, "gitlab-ci-local", "gitlab-ci-local")
	for _, tool := range []string{"git", "rsync", "bash"} {
		needtool.Path(t, tool, "gitlab-ci-local needs it (apt-get install -y "+tool+")")
	}
	p := citest.NewPodman(t)
	image := citest.BuildImage(t, p, "Dockerfile", "gitlab")
	// gitlab-ci-local's helper container (chown, rsync of artifacts) would
	// come from Docker Hub: this one is built from this machine's packages.
	helper := citest.RootfsImage(t, p, "gcl-helper", "bash", "sh", "rsync", "chown", "chmod", "mkdir", "id", "cp", "cat", "ls", "rm")

	ns := kube.Namespace(t)
	proj := gitlabProject(t, "khook/khook", map[string]string{
		".gitlab-ci.yml": strings.NewReplacer("%IMAGE%", image, "%NS%", ns).Replace(gitlabCI),
		"khook.yaml":     specYAML,
	})
	// CI/CD variables as a project sets them: the kubeconfig content and a
	// secret, both masked in GitLab; gitlab-ci-local reads them from here.
	kc, err := os.ReadFile(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	writeYAML(t, filepath.Join(proj, ".gitlab-ci-local-variables.yml"), map[string]string{
		"KHOOK_KUBECONFIG":         string(kc),
		"KHOOK_SECRET_DB_PASSWORD": secretValue,
	})

	podman := p.Wrapper(t)
	run := func(name string, wantOK bool, source string, args ...string) string {
		t.Helper()
		// gitlab-ci-local says GITLAB_CI=false; the jobs are GitLab's.
		out, err := gitlabCILocal(t, gcl, proj, source, p.Env, append([]string{"--variable", "GITLAB_CI=true", "--container-executable", podman,
			"--helper-image", helper, "--pull-policy", "if-not-present", "--network", "host"}, args...)...)
		if (err == nil) != wantOK {
			t.Fatalf("gitlab-ci-local, %s: exit %v, want success %v\n%s", name, err, wantOK, out)
		}
		if strings.Contains(out, secretValue) {
			t.Errorf("gitlab-ci-local, %s: the masked secret is in the job log", name)
		}
		var jobs []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, " starting ") || strings.Contains(l, "khook plan:") || strings.Contains(l, "khook apply:") ||
				strings.Contains(l, "khook drift:") || strings.Contains(l, "imported artifacts") ||
				strings.Contains(l, "Changes:") || strings.Contains(l, " PASS ") || strings.Contains(l, " FAIL ") {
				jobs = append(jobs, strings.TrimSpace(l))
			}
		}
		t.Logf("gitlab-ci-local, %s pipeline:\n%s", name, strings.Join(jobs, "\n"))
		return out
	}
	dotenv := func(job, out string) map[string]string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(proj, ".gitlab-ci-local", "artifacts", job, ".khook", "khook.env"))
		if err != nil {
			t.Fatalf("%s left no dotenv report: %v\n%s", job, err, out)
		}
		return parseEnv(string(data))
	}

	// 1. A merge request: the plan job only.
	out := run("merge request", true, "merge_request_event", "--unset-variable", "CI_COMMIT_BRANCH")
	if !strings.Contains(out, "khook-plan") || strings.Contains(out, "khook-apply") || strings.Contains(out, "khook-drift") {
		t.Fatalf("a merge request pipeline runs the plan job only:\n%s", out)
	}
	if env := dotenv("khook-plan", out); env["KHOOK_STATUS"] != "ok" || env["KHOOK_CHANGES"] != "true" {
		t.Fatalf("the merge request's plan: %v\n%s", env, out)
	}
	for _, f := range []string{"junit.xml", "terraform.json", "e2e.khookplan"} {
		if _, err := os.Stat(filepath.Join(proj, ".gitlab-ci-local", "artifacts", "khook-plan", ".khook", f)); err != nil {
			t.Errorf("the plan job's artifacts lack .khook/%s: %v", f, err)
		}
	}

	// 2. The default branch: plan, then a person starts the apply of the
	// saved plan.
	out = run("default branch", true, "push", "--manual", "khook-apply")
	if env := dotenv("khook-apply", out); env["KHOOK_STATUS"] != "ok" || env["KHOOK_CHANGES"] != "true" {
		t.Fatalf("the manual apply: %v\n%s", env, out)
	}
	// KHOOK_PLAN_FILE is set on the apply job, so it succeeds only with the
	// plan job's file (without it: plan-not-found): it must come from the
	// plan job's artifacts.
	if !regexp.MustCompile(`(?m)^khook-apply +imported artifacts`).MatchString(out) {
		t.Errorf("the apply job did not receive the plan job's artifacts (the saved plan):\n%s", out)
	}

	// 3. The nightly schedule: the drift job only; an edit in the cluster is drift.
	editApplied(t, ns)
	out = run("schedule", false, "schedule")
	if strings.Contains(out, "khook-plan") || !strings.Contains(out, "khook-drift") {
		t.Fatalf("a scheduled pipeline runs the drift job only:\n%s", out)
	}
	if env := dotenv("khook-drift", out); env["KHOOK_DRIFT"] != "true" || env["KHOOK_FAILURE_REASON"] != "drift" {
		t.Fatalf("the drift job on an edited cluster: %v\n%s", env, out)
	}
	t.Logf("gitlab-ci-local ran the component's plan, apply and drift jobs against %s", kube.RESTConfig.Host)
}
