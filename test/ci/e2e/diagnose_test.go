package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/e2e/podenv"
)

const webChart = `apiVersion: v2
name: web
version: 0.1.0
`

// The chart's Deployment asks for a node label no node has.
const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      nodeSelector: {khook.test/no-such-node: "true"}
      containers:
        - name: web
          image: nginx:1.27
`

// TestFailedStepsAreDiagnosedWherePeopleLook runs the built binary as the
// GitHub action against the harness: each failing step's pod, reason,
// message, restarts, exit code and log tail (the secret masked) reach the
// terminal, results.json, the job summary, the annotation and the comment.
func TestFailedStepsAreDiagnosedWherePeopleLook(t *testing.T) {
	ns := kube.Namespace(t)
	if err := podenv.Install(t.Context(), kube.Client, ns); err != nil {
		t.Fatal(err)
	}
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "diagnose.yaml", map[string]string{"command": "apply", "comment": "always", "vars": "NS=" + ns})
	g.Write(t, "charts/web/Chart.yaml", webChart)
	g.Write(t, "charts/web/templates/deployment.yaml", webDeployment)
	g.Set("KHOOK_SECRET_DB_PASSWORD=" + cluster.LeakedSecret)

	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 1 {
		t.Fatalf("apply exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	stdout := withoutMasks(res.Stdout)
	summary := g.Read(t, "summary")
	cs := srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("%d comments, want 1", len(cs))
	}
	comment := cs[0].Body
	outs, err := gha.ParseKeyValues(g.Read(t, "output"))
	if err != nil {
		t.Fatal(err)
	}
	raw := readDir(t, filepath.Join(g.Workspace, ".khook"))["results.json"]
	// KHOOK_TEST_DUMP_DIAGNOSIS=<dir> keeps every output (docs/failures.md
	// shows them).
	if dir := os.Getenv("KHOOK_TEST_DUMP_DIAGNOSIS"); dir != "" {
		for name, body := range map[string]string{"terminal.txt": stdout, "summary.md": summary, "comment.md": comment,
			"results.json": raw, "annotations.txt": strings.Join(annotationLine.FindAllString(res.Stdout, -1), "\n")} {
			_ = os.WriteFile(filepath.Join(dir, name), []byte(citest.Normalize(body, ns)), 0o644)
		}
	}
	var results model.Results
	if err := json.Unmarshal([]byte(raw), &results); err != nil {
		t.Fatalf("results.json: %v\n%s", err, raw)
	}
	steps := map[string]model.StepResult{}
	for _, s := range results.Steps {
		steps[s.Name] = s
	}
	annotations := annotationLine.FindAllString(res.Stdout, -1)
	annotation := func(step string) string {
		// Workflow commands escape their properties (the title): undo it.
		unescape := strings.NewReplacer("%3A", ":", "%2C", ",", "%0D", "\r", "%0A", "\n", "%25", "%")
		for _, a := range annotations {
			if a = unescape.Replace(a); strings.Contains(a, "step "+step+" failed") {
				return a
			}
		}
		t.Errorf("no annotation for step %s in:\n%s", step, strings.Join(annotations, "\n"))
		return ""
	}
	sinks := map[string]string{"terminal": stdout, "summary": summary, "comment": comment}
	// everywhere: each text is in the terminal, the summary and the comment.
	everywhere := func(what string, texts ...string) {
		t.Helper()
		for name, body := range sinks {
			for _, text := range texts {
				if !strings.Contains(body, text) {
					t.Errorf("%s: the %s lacks %q", what, name, text)
				}
			}
		}
	}
	for name, body := range sinks {
		if strings.Contains(body, cluster.LeakedSecret) {
			t.Errorf("the %s shows the secret", name)
		}
	}
	if strings.Contains(raw, cluster.LeakedSecret) || strings.Contains(strings.Join(annotations, "\n"), cluster.LeakedSecret) {
		t.Error("results.json or an annotation shows the secret")
	}

	// helm: the Deployment cannot be scheduled.
	web := steps["web"].Diagnosis
	if web == nil || len(web.Pods) != 1 || web.Pods[0].Condition == nil || web.Pods[0].Condition.Reason != "Unschedulable" ||
		!strings.Contains(web.Pods[0].Condition.Message, "didn't match Pod's node affinity/selector") {
		t.Fatalf("web: diagnosis %+v", web)
	}
	webPod := web.Pods[0].Name
	everywhere("web", "pod "+webPod+" Pending: PodScheduled=False Unschedulable: 0/3 nodes are available",
		"Deployment "+ns+"/web: InProgress", "FailedScheduling")
	if a := annotation("web"); !strings.Contains(a, "pod "+webPod+" Pending: PodScheduled=False Unschedulable: 0/3 nodes are available") {
		t.Errorf("web annotation: %s", a)
	}
	// A failed install wrote: a change, named in the summary line.
	if outs["changes"] != "true" || !results.Changes {
		t.Errorf("changes output %q, results.json changes %v; want true", outs["changes"], results.Changes)
	}
	everywhere("web", "Helm: 1 installed (failed: "+ns+"/web)")

	// rollout: the pod crash-loops after an OOM kill.
	api := steps["api-rollout"].Diagnosis
	if api == nil || len(api.Pods) != 1 || len(api.Pods[0].Containers) != 1 {
		t.Fatalf("api-rollout: diagnosis %+v", api)
	}
	apiPod, c := api.Pods[0].Name, api.Pods[0].Containers[0]
	if c.Reason != "CrashLoopBackOff" || c.Restarts != 5 || c.LastTermination == nil || c.LastTermination.Reason != "OOMKilled" ||
		c.LastTermination.ExitCode != 137 || !c.LogsPrevious || len(c.Logs) != len(cluster.LeakyLogLines) {
		t.Errorf("api-rollout container: %+v", c)
	}
	// The redactor masks the URL's credentials with the secret in them.
	const masked = "connecting to postgres://***@db:5432/app"
	if len(c.Logs) > 1 && c.Logs[1] != masked {
		t.Errorf("api-rollout log line %q, want %q", c.Logs[1], masked)
	}
	reason := "pod " + apiPod + " CrashLoopBackOff: OOMKilled (exit 137), 5 restarts"
	everywhere("api-rollout", reason, "last terminated OOMKilled (exit 137)", masked, cluster.LeakyLogLines[2])
	if a := annotation("api-rollout"); !strings.Contains(a, reason) || !strings.Contains(a, "out of memory") {
		t.Errorf("api-rollout annotation: %s", a)
	}

	// apply waitFor: the image cannot be pulled.
	worker := steps["worker"].Diagnosis
	if worker == nil || len(worker.Pods) != 1 || worker.Pods[0].Containers[0].Reason != "ImagePullBackOff" {
		t.Fatalf("worker: diagnosis %+v", worker)
	}
	pull := `pod ` + worker.Pods[0].Name + ` ImagePullBackOff: Back-off pulling image "registry.example/worker:missing"`
	everywhere("worker", pull, "registry.example/worker:missing: not found")
	if a := annotation("worker"); !strings.Contains(a, pull) {
		t.Errorf("worker annotation: %s", a)
	}

	// job: its pod fails with exit code 1.
	job := steps["migrate"].Diagnosis
	if job == nil || len(job.Pods) != 1 || job.Pods[0].Containers[0].ExitCode == nil || *job.Pods[0].Containers[0].ExitCode != 1 {
		t.Fatalf("migrate: diagnosis %+v", job)
	}
	jobReason := "pod " + job.Pods[0].Name + " Error: exit 1"
	everywhere("migrate", jobReason, "simulated container failure", cluster.PodLogLines[2])
	if a := annotation("migrate"); !strings.Contains(a, jobReason) {
		t.Errorf("migrate annotation: %s", a)
	}
	if t.Failed() {
		t.Logf("terminal:\n%s\nsummary:\n%s", stdout, summary)
	}
}
