package pipelines

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/needtool"
)

// actionRef is what the example workflows use; act runs the checkout in
// its place (--local-repository) and the image it names is the one built
// from the checkout, tagged so (--pull=false).
const actionRef = "khook/khook@v0.1.0"

// validateWorkflow has no example of its own: a pull request's validate.
const validateWorkflow = `name: khook validate
on: pull_request
jobs:
  validate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: validate
        uses: khook/khook@v0.1.0
        env:
          KHOOK_SECRET_DB_PASSWORD: ${{ secrets.DB_PASSWORD }}
        with:
          command: validate
          var-file: vars/prod.yaml
`

// probe is appended to each example's job: it prints the khook step's
// outputs as a later step sees them.
const probe = `      - name: probe
        if: always()
        run: |
          echo 'KHOOK-OUTPUTS ${{ toJSON(steps.%s.outputs) }}'
          echo 'KHOOK-OUTPUTS-END'
`

// The Action as a user runs it, under nektos/act with podman in act's
// job-container mode: validate and plan on a pull request (the plan's
// comment posted to the REST stand-in), the apply after the merge (held to
// the plan the comment recorded), and the nightly drift run.
func TestActionUnderAct(t *testing.T) {
	citest.AwaitPipelineTools(t)
	act := filepath.Join(citest.ToolsDir(t), "act")
	if _, err := os.Stat(act); err != nil {
		needtool.Missing(t, "act", "act is not installed at %s: make pipeline-tools builds the pinned nektos/act (tools/act)", act)
	}
	mod, err := os.ReadFile(filepath.Join(citest.RepoRoot(), "tools", "act", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	pin := regexp.MustCompile(`github\.com/nektos/act v(\S+)`).FindSubmatch(mod)
	if pin == nil {
		t.Fatal("tools/act/go.mod requires no github.com/nektos/act version")
	}
	if out, err := exec.Command(act, "--version").Output(); err != nil || !strings.Contains(string(out), "version "+string(pin[1])) {
		needtool.Missing(t, "act", "%s is not the pinned act %s (it says %q, %v): make pipeline-tools rebuilds it", act, pin[1], strings.TrimSpace(string(out)), err)
	}
	needtool.Path(t, "git", "act reads the workspace's commit with it")
	p := citest.NewPodman(t)
	image := citest.BuildImage(t, p, "Dockerfile", "")
	actionImage := strings.TrimPrefix(actionYAMLImage(t), "docker://")
	if out, code := p.Run("tag", image, actionImage); code != 0 {
		t.Fatalf("podman tag %s %s: %s", image, actionImage, out)
	}
	runner := citest.RootfsImage(t, p, "act-runner", "bash", "sh", "cat", "mkdir", "chmod", "rm", "ls", "env", "cp", "mv", "tail", "head", "sleep", "tar")
	sock := podmanService(t, p)

	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	srv.Login = "github-actions[bot]"

	ws := t.TempDir()
	write(t, filepath.Join(ws, "khook.yaml"), specYAML)
	write(t, filepath.Join(ws, "vars", "prod.yaml"), "NS: "+ns+"\n")
	write(t, filepath.Join(ws, ".github", "workflows", "validate.yml"), validateWorkflow+fmt.Sprintf(probe, "validate"))
	for file, step := range map[string]string{"pr-plan.yml": "plan", "apply-on-merge.yml": "apply", "nightly-drift.yml": "drift"} {
		data, err := os.ReadFile(filepath.Join(citest.RepoRoot(), "examples", "github", file))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(ws, ".github", "workflows", file), strings.TrimRight(string(data), "\n")+"\n"+fmt.Sprintf(probe, step))
	}
	// upload-artifact would come from GitHub: a local stand-in that lists
	// what it would keep.
	stub := t.TempDir()
	write(t, filepath.Join(stub, "action.yml"), "name: upload-artifact stand-in\ninputs:\n  name: {}\n  path: {}\nruns:\n  using: composite\n  steps:\n    - run: ls -R \"${{ inputs.path }}\"\n      shell: bash\n")
	git(t, ws, "init", "-q", "-b", "main")
	git(t, ws, "remote", "add", "origin", "https://github.com/acme/infra.git")
	git(t, ws, "add", "-A")
	git(t, ws, "-c", "user.name=khook-test", "-c", "user.email=test@khook.invalid", "commit", "-q", "-m", "spec")
	sha := git(t, ws, "rev-parse", "HEAD")

	kc, err := os.ReadFile(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	const planKey = "act-pl4n-k3y-77e1"
	masked := []string{secretValue, planKey, bearerToken(t, string(kc))}

	run := func(name, event, workflow string, payload map[string]any, wantOK bool) (string, map[string]string, string) {
		t.Helper()
		eventFile := filepath.Join(t.TempDir(), "event.json")
		data, _ := json.Marshal(payload)
		write(t, eventFile, string(data))
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, act, event, "-C", ws, "-W", filepath.Join(".github", "workflows", workflow), "-e", eventFile,
			"-P", "ubuntu-latest="+runner, "--pull=false", "--rm", "--container-daemon-socket", "-", "--network", "host",
			"--no-cache-server", "--action-offline-mode", "--defaultbranch", "main",
			"--local-repository", actionRef+"="+citest.RepoRoot(), "--local-repository", "actions/upload-artifact@v4="+stub,
			"--env", "GITHUB_API_URL="+srv.URL, "--env", "GITHUB_REPOSITORY=acme/infra",
			"-s", "GITHUB_TOKEN=ghs_act_t0ken", "-s", "KUBECONFIG="+string(kc), "-s", "DB_PASSWORD="+secretValue, "-s", "KHOOK_PLAN_KEY="+planKey)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "DOCKER_HOST=unix://" + sock}
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.CombinedOutput()
		log := string(out)
		if (err == nil) != wantOK {
			t.Fatalf("act %s (%s): exit %v, want success %v\n%s", workflow, name, err, wantOK, log)
		}
		for _, m := range masked {
			if m != "" && strings.Contains(log, m) {
				t.Errorf("act %s: a masked value (%.4s...) is in act's log", workflow, m)
			}
		}
		outputs := map[string]string{}
		if _, rest, ok := strings.Cut(log, "KHOOK-OUTPUTS "); ok {
			js, _, _ := strings.Cut(rest, "KHOOK-OUTPUTS-END")
			js = stripActPrefix(js)
			if err := json.Unmarshal([]byte(js), &outputs); err != nil {
				t.Fatalf("act %s: the probe's outputs are not JSON (%v): %q", workflow, err, js)
			}
		}
		// act prints the step's summary after "Summary - ", up to its next
		// prefixed line.
		summary := ""
		if _, rest, ok := strings.Cut(log, "Summary - "); ok {
			for _, l := range strings.Split(rest, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "[") {
					break
				}
				summary += l + "\n"
			}
		}
		verdict := ""
		for _, l := range strings.Split(summary, "\n") {
			if strings.HasPrefix(l, "**") {
				verdict = l
				break
			}
		}
		t.Logf("act %s %s: status=%s changes=%s drift=%s failure-reason=%s comment-url=%s; summary: %s", event, workflow,
			outputs["status"], outputs["changes"], outputs["drift"], outputs["failure-reason"], outputs["comment-url"], verdict)
		return log, outputs, summary
	}
	pr := map[string]any{"number": 7, "pull_request": map[string]any{"number": 7, "head": map[string]any{"sha": sha}, "base": map[string]any{"sha": sha}}}

	// 1. validate on the pull request.
	_, outs, summary := run("validate", "pull_request", "validate.yml", pr, true)
	if outs["status"] != "ok" || !strings.Contains(summary, "valid") {
		t.Fatalf("validate: outputs %v, summary:\n%s", outs, summary)
	}

	// 2. plan on the pull request: the comment on PR 7 in the stand-in.
	log, outs, summary := run("plan", "pull_request", "pr-plan.yml", pr, true)
	if outs["status"] != "ok" || outs["changes"] != "true" || outs["to-create"] != "2" || outs["comment-url"] == "" {
		t.Fatalf("plan: outputs %v\n%s", outs, log)
	}
	if !strings.Contains(summary, "settings") || !strings.Contains(summary, "Plan fingerprint") {
		t.Errorf("plan: the job summary lacks the plan:\n%s", summary)
	}
	cs := srv.Comments(7)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "planned") {
		t.Fatalf("plan: want one planned comment on pull request 7, got %+v", cs)
	}

	// 3. The merge: apply on the push to main, held to the reviewed plan.
	srv.Pulls = map[string]int{sha: 7}
	push := map[string]any{"ref": "refs/heads/main", "after": sha, "head_commit": map[string]any{"id": sha}}
	log, outs, _ = run("apply", "push", "apply-on-merge.yml", push, true)
	if outs["status"] != "ok" || outs["changes"] != "true" {
		t.Fatalf("apply: outputs %v\n%s", outs, log)
	}
	if !strings.Contains(log, "The plan matches the one reviewed on pull request #7") {
		t.Errorf("apply: the apply was not held to the plan reviewed on pull request 7 (plan-check strict):\n%s", log)
	}
	if cs := srv.Comments(7); len(cs) != 1 || !strings.Contains(cs[0].Body, "applied") {
		t.Errorf("apply: the comment on pull request 7 does not say applied: %+v", cs)
	}

	// 4. The nightly drift run after an edit in the cluster: the step fails
	// with drift=true and one drift issue opens.
	editApplied(t, ns)
	log, outs, summary = run("drift", "schedule", "nightly-drift.yml", map[string]any{"schedule": "17 3 * * *"}, false)
	if outs["drift"] != "true" || outs["failure-reason"] != "drift" || !strings.Contains(summary, "settings") {
		t.Fatalf("drift: outputs %v, summary:\n%s\n%s", outs, summary, log)
	}
	if !strings.Contains(log, "prod drifted from khook.yaml") {
		t.Errorf("drift: the workflow's page step did not run on drift:\n%s", log)
	}
	if is := srv.Issues(); len(is) != 1 {
		t.Errorf("drift: want one drift issue, got %d", len(is))
	}
}

// actionYAMLImage is the image action.yml runs.
func actionYAMLImage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(citest.RepoRoot(), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "image: docker://"); ok {
			return v
		}
	}
	t.Fatal("action.yml names no docker:// image")
	return ""
}

// bearerToken is the kubeconfig's token: khook masks it (::add-mask::).
func bearerToken(t *testing.T, kubeconfig string) string {
	for _, l := range strings.Split(kubeconfig, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "token:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// stripActPrefix removes act's "[workflow/job]   | " line prefixes.
func stripActPrefix(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if _, rest, ok := strings.Cut(l, "| "); ok {
			l = rest
		} else if strings.HasSuffix(strings.TrimSpace(l), "|") {
			l = ""
		} else if strings.HasPrefix(l, "[") {
			continue
		}
		lines = append(lines, l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// podmanService serves podman's Docker-compatible API on a socket for act,
// for the rest of the test.
func podmanService(t *testing.T, p *citest.Podman) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "podman.sock")
	cmd := exec.Command("podman", append(append([]string{}, p.Args...), "system", "service", "--time=0", "unix://"+sock)...)
	cmd.Env = p.Env
	if err := cmd.Start(); err != nil {
		t.Fatalf("podman system service: %v", err)
	}
	t.Cleanup(func() {
		// What act left (a failed job's containers) holds mounts in the
		// storage the test removes.
		p.Run("rm", "-af")
		cmd.Process.Kill()
		cmd.Wait()
	})
	// The socket file exists from bind(2), before the service listens or
	// answers: await the API's own answer, as act's first request needs.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	api := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	defer api.CloseIdleConnections()
	var last error
	for {
		if last = ping(ctx, api); last == nil {
			return sock
		}
		select {
		case <-ctx.Done():
			t.Fatalf("podman system service did not answer on %s within a minute: %v", sock, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ping asks the Docker-compatible API whether it serves (GET /_ping).
func ping(ctx context.Context, api *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://podman/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := api.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /_ping: %s", resp.Status)
	}
	return nil
}
