package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/needtool"
)

// The fleet: two real control planes (the package's, and a second one this
// test starts: about five seconds) reached through two kubeconfig secrets,
// and one cluster whose endpoint nothing listens on.
const fleetFile = `apiVersion: khook.io/v1
kind: Fleet
metadata: {name: platform}
files: [khook.yaml]
clusters:
  - {name: prod-ap, wave: 1, kubeconfigSecret: KUBECONFIG_AP, vars: {REGION: global}}
  - {name: prod-eu, wave: 2, kubeconfigSecret: KUBECONFIG_EU, vars: {REGION: global}}
  - {name: prod-us, wave: 2, kubeconfigSecret: KUBECONFIG_US, vars: {REGION: global}}
`

type matrix struct {
	Include []struct {
		Cluster          string `json:"cluster"`
		Wave             int    `json:"wave"`
		KubeconfigSecret string `json:"kubeconfigSecret"`
	} `json:"include"`
}

// A fleet in one pull request, with the built binary: fleet matrix, three
// legs as matrix jobs (each uploading its results to its own artifact
// directory), and fleet-report through khook ci posting one comment.
func TestFleetMatrixLegsAndOneReport(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "khook.yaml", map[string]string{"vars": "NS=" + ns, "kubeconfig": "", "diff": "true"})
	g.Write(t, "fleet.yaml", fleetFile)
	kc := kubeconfig(t)
	unreachable := regexp.MustCompile(`https://127\.0\.0\.1:\d+`).ReplaceAllString(kc, "https://127.0.0.1:1")
	if unreachable == kc {
		t.Fatal("the harness kubeconfig has no https://127.0.0.1:PORT server to replace")
	}
	second, kcUS := secondControlPlane(t, ns)
	g.Set("KUBECONFIG_EU="+kc, "KUBECONFIG_US="+kcUS, "KUBECONFIG_AP="+unreachable)

	res := citest.Run(t, g.Workspace, g.Environ, "fleet", "matrix", "-f", "fleet.yaml")
	if res.Code != 0 || strings.Count(res.Stdout, "\n") != 1 {
		t.Fatalf("fleet matrix: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var m matrix
	if err := json.Unmarshal([]byte(res.Stdout), &m); err != nil {
		t.Fatalf("the matrix is not JSON: %v\n%s", err, res.Stdout)
	}
	if len(m.Include) != 3 || m.Include[0].Cluster != "prod-ap" || m.Include[0].Wave != 1 || m.Include[2].KubeconfigSecret != "KUBECONFIG_US" {
		t.Fatalf("matrix = %+v", m)
	}

	for _, leg := range m.Include {
		g.ResetFiles()
		g.Set("INPUT_COMMAND=plan", "INPUT_FLEET=fleet.yaml", "INPUT_CLUSTER="+leg.Cluster, "INPUT_OUTPUT-DIR=artifacts/"+leg.Cluster)
		res := citest.Run(t, g.Workspace, g.Environ)
		want := 0
		if leg.Cluster == "prod-ap" {
			want = 1
		}
		if res.Code != want {
			t.Fatalf("leg %s: exit %d, want %d\n%s\n%s", leg.Cluster, res.Code, want, res.Stdout, res.Stderr)
		}
	}
	if n := len(srv.Comments(7)); n != 0 {
		t.Fatalf("the legs posted %d comments; a leg posts none", n)
	}
	if second != nil {
		// Each leg planned against its own control plane.
		for c, host := range map[string]string{"prod-eu": kube.RESTConfig.Host, "prod-us": second.RESTConfig.Host} {
			data, err := os.ReadFile(filepath.Join(g.Workspace, "artifacts", c, "khook-leg-"+c+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"`+host+`"`) {
				t.Errorf("leg %s did not plan against %s:\n%.600s", c, host, data)
			}
		}
	}

	report := func() (citest.Result, string) {
		g.ResetFiles()
		g.Set("INPUT_COMMAND=fleet-report", "INPUT_CLUSTER=", "INPUT_RESULTS=artifacts", "INPUT_OUTPUT-DIR=.khook")
		res := citest.Run(t, g.Workspace, g.Environ)
		cs := srv.Comments(7)
		if len(cs) != 1 {
			t.Fatalf("fleet-report: want exactly one comment, got %d\n%s", len(cs), res.Stdout)
		}
		return res, cs[0].Body
	}
	res, body := report()
	if res.Code != 1 {
		t.Errorf("fleet-report with a failed cluster: exit %d, want 1", res.Code)
	}
	for _, want := range []string{"prod-ap", "prod-eu, prod-us: the same", "❌ failed (cluster-unreachable)", "3 clusters: 2 with changes, 1 failed"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if outs["status"] != "failed" || outs["comment-url"] == "" {
		t.Errorf("fleet-report outputs: %v", outs)
	}

	// One results file lost: that cluster is failed, and the same comment
	// is edited.
	if err := os.Remove(filepath.Join(g.Workspace, "artifacts", "prod-us", "khook-leg-prod-us.json")); err != nil {
		t.Fatal(err)
	}
	_, body = report()
	if !strings.Contains(body, "failed (no results)") || !strings.Contains(body, "prod-us") || strings.Contains(body, "the same") {
		t.Errorf("prod-us without results is not reported failed:\n%s", body)
	}
	patches := 0
	for _, r := range srv.Requests {
		if strings.HasPrefix(r, "PATCH ") {
			patches++
		}
	}
	if patches != 1 {
		t.Errorf("the second report must edit the comment once; requests %v", srv.Requests)
	}

	// The wave gate: wave 1 (prod-ap) failed, maxFailures 0.
	g.Set("INPUT_WAVE=1", "INPUT_COMMENT=never")
	if res := citest.Run(t, g.Workspace, g.Environ); res.Code != 1 {
		t.Errorf("fleet-report wave 1: exit %d, want 1\n%s", res.Code, res.Stdout)
	}
	g.Set("INPUT_WAVE=", "INPUT_COMMENT=on-change")

	// plan --fleet without --cluster: every cluster from one process.
	res = citest.Run(t, g.Workspace, g.Environ, "plan", "--fleet", "fleet.yaml", "--set", "NS="+ns, "--parallel", "2")
	if res.Code != 1 || !strings.Contains(res.Stdout, "prod-eu, prod-us: the same") || !strings.Contains(res.Stdout, "failed (cluster-unreachable)") {
		t.Errorf("plan --fleet: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}

	// Over 300 legs: the real leg results copied per cluster.
	bigFleetReport(t, g, srv)
}

// unchanged is a leg's results as the same plan reads once applied: every
// changing action unchanged, no diffs (derived from the real leg, as the
// harness cannot converge 160 clusters).
func unchanged(leg map[string]any) map[string]any {
	data, _ := json.Marshal(leg)
	var out map[string]any
	json.Unmarshal(data, &out)
	out["changes"] = false
	plan := out["plan"].(map[string]any)
	plan["changes"] = false
	delete(plan, "totals") // recounted from the steps
	for _, st := range plan["steps"].([]any) {
		step := st.(map[string]any)
		if a := step["action"]; a == "create" || a == "configure" || a == "install" || a == "upgrade" || a == "delete" {
			step["action"] = "unchanged"
		}
		delete(step, "diff")
	}
	return out
}

// bigFleetReport copies the real legs' results to 400 clusters (every
// eighth one the unreachable cluster's failure, every other one unchanged)
// and checks the one comment
// stays under GitHub's limit, names every failed cluster and says what it
// left out.
func bigFleetReport(t *testing.T, g *citest.GitHub, srv *githubtest.Server) {
	read := func(c string) map[string]any {
		data, err := os.ReadFile(filepath.Join(g.Workspace, "artifacts", c, "khook-leg-"+c+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ok, failed := read("prod-eu"), read("prod-ap")
	var fleet strings.Builder
	fleet.WriteString("apiVersion: khook.io/v1\nkind: Fleet\nmetadata: {name: big}\nfiles: [khook.yaml]\nclusters:\n")
	var failedNames []string
	for i := 0; i < 400; i++ {
		name := fmt.Sprintf("region-%03d", i)
		fmt.Fprintf(&fleet, "  - {name: %s, kubeconfigSecret: KUBECONFIG_EU}\n", name)
		leg := ok
		switch {
		case i%8 == 0:
			leg, failedNames = failed, append(failedNames, name)
		case i%2 == 1:
			leg = unchanged(ok)
		}
		leg["cluster"], leg["fleet"] = name, "big"
		leg["summaryUrl"] = fmt.Sprintf("https://github.com/acme/infra/actions/runs/4242/job/%d", 900000+i)
		data, _ := json.Marshal(leg)
		g.Write(t, filepath.Join("big", name, "khook-leg-"+name+".json"), string(data))
	}
	g.Write(t, "big.yaml", fleet.String())
	g.ResetFiles()
	g.Set("INPUT_FLEET=big.yaml", "INPUT_RESULTS=big")
	res := citest.Run(t, g.Workspace, g.Environ)
	var body string
	for _, c := range srv.Comments(7) {
		if strings.Contains(c.Body, `identifier="fleet/big"`) {
			body = c.Body
		}
	}
	if body == "" {
		t.Fatalf("no comment for fleet big\n%s", res.Stdout)
	}
	if n := len([]rune(body)); n >= 65536 {
		t.Errorf("the comment over 400 legs has %d characters; GitHub allows 65,536", n)
	}
	for _, name := range failedNames {
		if !strings.Contains(body, name) {
			t.Errorf("failed cluster %s is not named", name)
		}
	}
	if !strings.Contains(body, "region-002, region-004, region-006") || !strings.Contains(body, ": the same") {
		t.Errorf("the identical plans are not grouped:\n%.3000s", body)
	}
	if !strings.Contains(body, "200 clusters without changes folded into one line") {
		t.Errorf("the comment does not say what it folded:\n%.2000s", body)
	}
	t.Logf("400 legs: the comment has %d characters", len([]rune(body)))
}

// secondControlPlane starts a control plane of the test's own, with
// namespace ns as in the package's, so both plan the same, and returns it
// and its kubeconfig's content. Against a connected cluster
// (KHOOK_TEST_KUBECONFIG) it returns nil and that cluster's kubeconfig:
// starting one there is not wanted.
func secondControlPlane(t *testing.T, ns string) (*cluster.Cluster, string) {
	t.Helper()
	if os.Getenv(cluster.KubeconfigEnv) != "" {
		t.Log("a connected cluster: prod-us is the same control plane as prod-eu")
		return nil, kubeconfig(t)
	}
	second, err := cluster.Start(context.Background(), cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Stop)
	second.DumpLogsOnFailure(t)
	if _, err := second.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(second.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return second, string(data)
}

// A pull request that changes only one cluster's policy rule: fleet matrix
// --changed-since selects that cluster alone (the built binary, real git),
// and its leg, given the fleet file's policies, fails on the rule against
// the real control plane while the other cluster's leg, without that rule,
// plans.
func TestFleetPolicyChangeSelectsItsCluster(t *testing.T) {
	needtool.Path(t, "git", "the changed-files selection reads the diff with it")
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	kc := kubeconfig(t)
	g := citest.NewGitHub(t, srv.URL, 7, map[string]string{"command": "plan", "kubeconfig": "", "github-token": "ghs_acceptance_t0ken",
		"diff": "false", "comment": "on-change", "file": "khook.yaml", "identifier": "", "var-file": "", "context": ""})
	g.Set("TMPDIR="+t.TempDir(), "KUBECONFIG_EU="+kc, "KUBECONFIG_US="+kc)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = g.Workspace
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	rule := "policies:\n  - name: eu-small-settings\n    deny: object.kind == \"ConfigMap\" && object.data.size == %q\n    message: '\"eu keeps its settings small\"'\n"
	g.Write(t, "khook.yaml", fmt.Sprintf(clusterSpec, "platform", ns))
	g.Write(t, "settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {size: large}\n")
	g.Write(t, "policies/eu.yaml", fmt.Sprintf(rule, "huge"))
	g.Write(t, "fleet.yaml", "apiVersion: khook.io/v1\nkind: Fleet\nmetadata: {name: platform}\nfiles: [khook.yaml]\nclusters:\n"+
		"  - {name: eu, kubeconfigSecret: KUBECONFIG_EU, policies: [policies/eu.yaml]}\n  - {name: us, kubeconfigSecret: KUBECONFIG_US}\n")
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "base")
	g.Write(t, "policies/eu.yaml", fmt.Sprintf(rule, "large"))
	git("commit", "-qam", "eu: large settings are too large")

	res := citest.Run(t, g.Workspace, g.Environ, "fleet", "matrix", "-f", "fleet.yaml", "--changed-since", "HEAD~1")
	var m matrix
	if err := json.Unmarshal([]byte(res.Stdout), &m); res.Code != 0 || err != nil {
		t.Fatalf("fleet matrix --changed-since: exit %d, %v\n%s\n%s", res.Code, err, res.Stdout, res.Stderr)
	}
	if len(m.Include) != 1 || m.Include[0].Cluster != "eu" {
		t.Errorf("only eu's policy changed; the matrix selects %+v", m.Include)
	}

	for cluster, want := range map[string]int{"eu": 1, "us": 0} {
		g.ResetFiles()
		g.Set("INPUT_FLEET=fleet.yaml", "INPUT_CLUSTER="+cluster, "INPUT_OUTPUT-DIR=artifacts/"+cluster)
		res := citest.Run(t, g.Workspace, g.Environ)
		denied := strings.Contains(res.Stdout, "eu keeps its settings small")
		if res.Code != want || denied != (cluster == "eu") {
			t.Errorf("leg %s: exit %d (want %d), denied by eu's rule %v\n%s\n%s", cluster, res.Code, want, denied, res.Stdout, res.Stderr)
		}
	}
}
