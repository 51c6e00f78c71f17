package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
)

// Drift that apply repairs (#36): with a state record, out-of-band edits
// -> the drift run exits 1 and opens the drift issue, naming the command
// that repairs it -> a plain apply re-runs the drifted steps (the record
// would have resumed them) and says so -> the next drift run exits 0 and
// closes the issue.
func TestGitHubActionApplyRepairsDriftWithAStateRecord(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "repair.yaml", map[string]string{"command": "apply", "comment": "never", "drift-issue": "true", "vars": "NS=" + ns})
	run := commandRunner(t, g)
	if res, _ := run("apply"); res.Code != 0 {
		t.Fatalf("apply exit %d\n%s", res.Code, res.Stdout)
	}
	if res, outs := run("drift"); res.Code != 0 || outs["drift"] != "false" || len(srv.Issues()) != 0 {
		t.Fatalf("converged drift run: exit %d outputs %v issues %d\n%s", res.Code, outs, len(srv.Issues()), res.Stdout)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := kube.Client.CoreV1().ConfigMaps(ns).Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"region":"us-east-1"}}`), metav1.PatchOptions{})
	must(t, err)
	_, err = kube.Client.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"pause:edited"}]}}}}`), metav1.PatchOptions{})
	must(t, err)

	res, outs := run("drift")
	if res.Code != 1 || outs["drift"] != "true" || outs["failure-reason"] != "drift" {
		t.Fatalf("drifted: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	if !strings.Contains(res.Stdout, "repair it with khook apply") {
		t.Errorf("the drift run does not name the command that repairs it:\n%s", res.Stdout)
	}
	issues := srv.Issues()
	if len(issues) != 1 || issues[0].State != "open" || !strings.Contains(issues[0].Body, "repair it with khook apply") {
		t.Fatalf("want one open drift issue naming the repair, got %+v", issues)
	}

	res, outs = run("apply")
	if res.Code != 0 || outs["changes"] != "true" {
		t.Fatalf("repairing apply: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	data, err := os.ReadFile(filepath.Join(g.Workspace, outs["results-json-path"]))
	must(t, err)
	var results model.Results
	must(t, json.Unmarshal(data, &results))
	for _, st := range results.Steps {
		if st.Status != model.StatusOK || st.Skip != "" || !strings.Contains(st.Detail, command.DriftRepairNote) {
			t.Errorf("step %s: %s skip %q detail %q, want it re-run for its drift and saying so", st.Name, st.Status, st.Skip, st.Detail)
		}
	}
	cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	must(t, err)
	if cm.Data["region"] != "eu-west-1" {
		t.Errorf("the ConfigMap was not repaired: %v", cm.Data)
	}

	res, outs = run("drift")
	if res.Code != 0 || outs["drift"] != "false" {
		t.Fatalf("drift run after the repair: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	if issues := srv.Issues(); len(issues) != 1 || issues[0].State != "closed" {
		t.Errorf("the drift issue is not closed: %+v", issues)
	}

	// Converged: the record resumes both steps again; --reconcile's input
	// runs them whatever it says.
	res, _ = run("apply")
	if res.Code != 0 || !strings.Contains(res.Stdout, "state record") {
		t.Errorf("converged apply: exit %d\n%s", res.Code, res.Stdout)
	}
	g.Set("INPUT_RECONCILE=true")
	res, outs = run("apply")
	data, err = os.ReadFile(filepath.Join(g.Workspace, outs["results-json-path"]))
	must(t, err)
	results = model.Results{}
	must(t, json.Unmarshal(data, &results))
	for _, st := range results.Steps {
		if st.Status != model.StatusOK || st.Skip != "" {
			t.Errorf("reconcile: step %s %s skip %q, want it run", st.Name, st.Status, st.Skip)
		}
	}
	if res.Code != 0 {
		t.Errorf("reconcile apply: exit %d\n%s", res.Code, res.Stdout)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
