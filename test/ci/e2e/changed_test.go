package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/e2e/apiproxy"
	"github.com/khook/khook/test/needtool"
)

// clusterSpec is one cluster's spec of a monorepo: a ConfigMap from a file
// beside it.
const clusterSpec = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: %s}
steps:
  - name: settings
    apply:
      namespace: %s
      manifests:
        - file: settings.yaml
`

// A repository with one spec per cluster and two commits, the second
// changing a file only the us spec reads: changed-only finishes the eu
// plan without a single API request (planned=false, changes=false, the
// summary says why) and plans us.
func TestGitHubActionChangedOnly(t *testing.T) {
	needtool.Path(t, "git", "the changed-files selection reads the diff with it")
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	proxy := apiproxy.Start(t, kube.RESTConfig)
	kc, err := os.ReadFile(proxy.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	g := citest.NewGitHub(t, srv.URL, 9, map[string]string{"command": "plan", "changed-only": "true", "kubeconfig": string(kc),
		"github-token": "ghs_acceptance_t0ken", "diff": "false", "comment": "on-change"})
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = g.Workspace
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, c := range []string{"eu", "us"} {
		g.Write(t, "clusters/"+c+"/khook.yaml", fmt.Sprintf(clusterSpec, c, ns))
		g.Write(t, "clusters/"+c+"/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+c+"}\ndata: {size: small}\n")
	}
	g.Write(t, "README.md", "# clusters\n")
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "base")
	base := git("rev-parse", "HEAD")
	g.Write(t, "clusters/us/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: us}\ndata: {size: large}\n")
	g.Write(t, "README.md", "# clusters, one spec each\n")
	git("commit", "-qam", "us grows")
	head := git("rev-parse", "HEAD")
	event := fmt.Sprintf(`{"action":"synchronize","number":9,"pull_request":{"number":9,"base":{"sha":%q},"head":{"sha":%q,"repo":{"fork":false}}}}`, base, head)
	if err := os.WriteFile(filepath.Join(g.Dir, "event.json"), []byte(event), 0o644); err != nil {
		t.Fatal(err)
	}
	proxy.Requests()

	plan := func(cluster string) (map[string]string, string) {
		t.Helper()
		g.ResetFiles()
		g.Set("INPUT_FILE=clusters/"+cluster+"/khook.yaml", "INPUT_IDENTIFIER="+cluster)
		res := citest.Run(t, g.Workspace, g.Environ)
		if res.Code != 0 {
			t.Fatalf("plan of %s: exit %d\n%s\n%s", cluster, res.Code, res.Stdout, res.Stderr)
		}
		outs, err := gha.ParseKeyValues(g.Read(t, "output"))
		if err != nil {
			t.Fatal(err)
		}
		return outs, g.Read(t, "summary")
	}

	outs, summary := plan("eu")
	if n := proxy.Requests(); n.Total() != 0 || n.Discovery != 0 {
		t.Errorf("the untouched spec made %d API requests (%v)", n.Total(), n.Verbs)
	}
	if outs["planned"] != "false" || outs["changes"] != "false" || outs["status"] != "ok" {
		t.Errorf("untouched spec's outputs: planned=%q changes=%q status=%q", outs["planned"], outs["changes"], outs["status"])
	}
	want := fmt.Sprintf("Not planned: no file this spec reads changed between %s and %s.", base[:7], head[:7])
	if !strings.Contains(summary, want) {
		t.Errorf("the summary does not say %q:\n%s", want, summary)
	}
	if cs := srv.Comments(9); len(cs) != 0 {
		t.Errorf("an untouched spec created a comment: %+v", cs)
	}

	outs, summary = plan("us")
	if n := proxy.Requests(); n.Total() == 0 {
		t.Error("the touched spec was not planned against the cluster")
	}
	if outs["planned"] != "true" || outs["changes"] != "true" || !strings.Contains(summary, "would change the cluster") {
		t.Errorf("touched spec: planned=%q changes=%q\n%s", outs["planned"], outs["changes"], summary)
	}

	// A commit changing only a policy file: a plan given it (the input
	// policies) reads it, so it plans; a plan without it does not.
	g.Write(t, "policies/rules.yaml", "policies:\n- name: small\n  warn: \"false\"\n  message: never\n")
	git("add", ".")
	git("commit", "-qm", "a policy")
	head = git("rev-parse", "HEAD")
	g.Write(t, "policies/rules.yaml", "policies:\n- name: small\n  warn: \"false\"\n  message: still never\n")
	git("commit", "-qam", "the policy's message")
	base, head = head, git("rev-parse", "HEAD")
	event = fmt.Sprintf(`{"action":"synchronize","number":9,"pull_request":{"number":9,"base":{"sha":%q},"head":{"sha":%q,"repo":{"fork":false}}}}`, base, head)
	if err := os.WriteFile(filepath.Join(g.Dir, "event.json"), []byte(event), 0o644); err != nil {
		t.Fatal(err)
	}
	if outs, summary = plan("eu"); outs["planned"] != "false" {
		t.Errorf("a plan without the policy file planned on its change: planned=%q\n%s", outs["planned"], summary)
	}
	g.Set("INPUT_POLICIES=policies/rules.yaml")
	if outs, summary = plan("eu"); outs["planned"] != "true" {
		t.Errorf("a plan given the changed policy file did not plan: planned=%q\n%s", outs["planned"], summary)
	}
}
