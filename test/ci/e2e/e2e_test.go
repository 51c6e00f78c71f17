// Package e2e runs the built `khook ci` the way the GitHub runner runs the
// action — environment only — against the harness cluster and a loopback
// stand-in for the GitHub REST API.
package e2e

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/cluster"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var kube *cluster.Cluster

func TestMain(m *testing.M) {
	code := cluster.Main(m, &kube)
	citest.RemoveBuilds()
	os.Exit(code)
}

var (
	kubeconfigOnce sync.Once
	kubeconfigData []byte
	kubeconfigErr  error
)

// kubeconfig is the harness's admin kubeconfig content, read once: it is
// what the workflow passes as the kubeconfig input.
func kubeconfig(t *testing.T) string {
	t.Helper()
	kubeconfigOnce.Do(func() { kubeconfigData, kubeconfigErr = os.ReadFile(kube.Kubeconfig) })
	if kubeconfigErr != nil {
		t.Fatal(kubeconfigErr)
	}
	return string(kubeconfigData)
}

var annotationLine = regexp.MustCompile(`(?m)^::(error|warning|notice)[ :].*$`)

// newRunner lays out a pull_request step for the spec in testdata/name,
// with the harness kubeconfig passed as the kubeconfig input's content.
func newRunner(t *testing.T, apiURL, spec string, inputs map[string]string) *citest.GitHub {
	t.Helper()
	in := map[string]string{"file": "khook.yaml", "kubeconfig": kubeconfig(t), "github-token": "ghs_acceptance_t0ken",
		"diff": "false", "comment": "on-change", "identifier": "", "var-file": "", "context": ""}
	for k, v := range inputs {
		in[k] = v
	}
	g := citest.NewGitHub(t, apiURL, 7, in)
	data, err := os.ReadFile(filepath.Join("testdata", spec))
	if err != nil {
		t.Fatal(err)
	}
	g.Write(t, "khook.yaml", string(data))
	g.Set("TMPDIR=" + t.TempDir())
	return g
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	citest.Golden(t, filepath.Join("testdata", name), got, *update)
}

func TestGitHubActionPlanCommentApply(t *testing.T) {
	ns := kube.Namespace(t)
	t.Cleanup(func() { deleteNamespace(ns + "-app") })
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "khook.yaml", map[string]string{"command": "plan", "vars": "NS=" + ns + "\nREGION=eu-west-1"})

	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("plan exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	norm := func(s string) string { return citest.Normalize(s, ns) }
	golden(t, "plan-summary.md", norm(g.Read(t, "summary")))
	outs, err := gha.ParseKeyValues(g.Read(t, "output"))
	if err != nil {
		t.Fatalf("GITHUB_OUTPUT: %v", err)
	}
	golden(t, "plan-outputs.txt", norm(formatOutputs(outs)))
	golden(t, "plan-annotations.txt", norm(strings.Join(annotationLine.FindAllString(res.Stdout, -1), "\n")+"\n"))
	cs := srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("want one comment after plan, got %d", len(cs))
	}
	golden(t, "plan-comment.md", norm(cs[0].Body))

	// A second push (a new head commit): the same comment is edited.
	g.ResetFiles()
	g.Event(t, 7, "89abcdef89abcdef89abcdef89abcdef89abcdef")
	if res := citest.Run(t, g.Workspace, g.Environ); res.Code != 0 {
		t.Fatalf("second plan exit %d\n%s", res.Code, res.Stdout)
	}
	if cs := srv.Comments(7); len(cs) != 1 {
		t.Fatalf("the second plan must edit the comment; there are %d", len(cs))
	}

	// Apply: the comment's status line changes to applied.
	g.ResetFiles()
	g.Set("INPUT_COMMAND=apply")
	res = citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	cs = srv.Comments(7)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "**Status:** ✅ applied") {
		t.Fatalf("after apply: %d comments, body:\n%s", len(cs), cs[len(cs)-1].Body)
	}
	golden(t, "apply-comment.md", norm(cs[0].Body))
	outs, _ = gha.ParseKeyValues(g.Read(t, "output"))
	if outs["status"] != "ok" || outs["comment-url"] == "" || outs["results-json-path"] != ".khook/results.json" {
		t.Errorf("apply outputs: %v", outs)
	}
	patches := 0
	for _, r := range srv.Requests {
		if strings.HasPrefix(r, "PATCH ") {
			patches++
		}
	}
	if patches != 2 {
		t.Errorf("want 2 comment edits (second plan, apply), got requests %v", srv.Requests)
	}

	// Destroy tears it down and says so on the same comment.
	g.ResetFiles()
	g.Set("INPUT_COMMAND=destroy")
	res = citest.Run(t, g.Workspace, g.Environ)
	outs, _ = gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 0 || outs["status"] != "ok" {
		t.Fatalf("destroy exit %d outputs %v\n%s\n%s", res.Code, outs, res.Stdout, res.Stderr)
	}
	if cs := srv.Comments(7); len(cs) != 1 || !strings.Contains(cs[0].Body, "**Status:** ✅ destroyed") {
		t.Errorf("after destroy: %d comments:\n%s", len(cs), cs[len(cs)-1].Body)
	}
}

func TestGitHubActionForkTokenWarns(t *testing.T) {
	ns := kube.Namespace(t)
	t.Cleanup(func() { deleteNamespace(ns + "-app") })
	srv := githubtest.New()
	defer srv.Close()
	srv.ForbidWrites = true
	g := newRunner(t, srv.URL, "khook.yaml", map[string]string{"command": "plan", "vars": "NS=" + ns + "\nREGION=eu-west-1"})
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("a 403 on the comment must leave the step green; exit %d\n%s", res.Code, res.Stdout)
	}
	if !strings.Contains(res.Stdout, "::warning title=khook::khook could not comment on pull request #7") {
		t.Errorf("no warning:\n%s", res.Stdout)
	}
}

func formatOutputs(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		b.WriteString(k + "=" + m[k] + "\n")
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// stateRecord returns every value of the spec's state record Secret.
func stateRecord(t *testing.T, ns, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sec, err := kube.Client.CoreV1().Secrets(ns).Get(ctx, "khook-state-"+name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the state record: %v", err)
	}
	var b strings.Builder
	for k, v := range sec.Data {
		b.WriteString(k + "=" + string(v) + "\n")
	}
	for k, v := range sec.Annotations {
		b.WriteString(k + "=" + v + "\n")
	}
	return b.String()
}

// deleteNamespace removes a namespace the spec created (createNamespace).
func deleteNamespace(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = kube.Client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
}

// The nightly drift job: converged -> green; an out-of-band edit -> the
// step fails with drift=true and failure-reason=drift.
func TestGitHubActionDrift(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "drift.yaml", map[string]string{"command": "apply", "comment": "never", "vars": "NS=" + ns + "\nREGION=eu-west-1"})
	if res := citest.Run(t, g.Workspace, g.Environ); res.Code != 0 {
		t.Fatalf("apply exit %d\n%s", res.Code, res.Stdout)
	}

	g.ResetFiles()
	g.Set("INPUT_COMMAND=drift")
	res := citest.Run(t, g.Workspace, g.Environ)
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 0 || outs["drift"] != "false" || outs["status"] != "ok" {
		t.Fatalf("converged drift check: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["region"] = "us-east-1" // an out-of-band edit
	if _, err := kube.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.ResetFiles()
	res = citest.Run(t, g.Workspace, g.Environ)
	outs, _ = gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 1 || outs["drift"] != "true" || outs["failure-reason"] != "drift" || outs["status"] != "failed" {
		t.Fatalf("drifted: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	if !strings.Contains(g.Read(t, "summary"), "Drift detected: 1 step no longer matches the spec.") {
		t.Errorf("summary:\n%s", g.Read(t, "summary"))
	}
	if !strings.Contains(res.Stdout, "::error file=khook.yaml,line=6,col=5,title=khook drift%3A step settings would configure") {
		t.Errorf("no drift annotation on the settings step:\n%s", res.Stdout)
	}
}
