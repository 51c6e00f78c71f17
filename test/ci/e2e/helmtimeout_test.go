package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/test/ci/citest"
)

// The chart's Deployment asks, when stuck, for a node label no node has;
// its ConfigMap is ready at once.
const stuckDeployment = `apiVersion: apps/v1
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
      {{- if .Values.stuck }}
      nodeSelector: {khook.test/no-such-node: "true"}
      {{- end }}
      containers:
        - name: web
          image: nginx:1.27
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data: {stuck: "{{ .Values.stuck }}"}
`

// A helm upgrade held up by one object fails naming that object and why
// (kstatus's verdict, as Helm's wait judged it), not only "timed out", in
// the terminal, -o json and khook ci's job summary (issue #50).
func TestHelmUpgradeTimeoutNamesWhatHeldIt(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "helm-upgrade-timeout.yaml", map[string]string{"command": "apply",
		"vars": "NS=" + ns + "\nSTUCK=true\nTIMEOUT=8s"})
	g.Write(t, "charts/web/Chart.yaml", webChart)
	g.Write(t, "charts/web/templates/web.yaml", stuckDeployment)
	apply := func(stuck, timeout string, args ...string) citest.Result {
		t.Helper()
		return citest.Run(t, g.Workspace, g.Environ, append([]string{"apply", "-f", "khook.yaml", "--kubeconfig", kube.Kubeconfig,
			"--set", "NS=" + ns, "--set", "STUCK=" + stuck, "--set", "TIMEOUT=" + timeout}, args...)...)
	}
	if res := apply("false", "60s"); res.Code != 0 {
		t.Fatalf("install: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	// The old pod keeps the Deployment available; the new one never
	// schedules, so the rollout never completes.
	const sentence = "upgrade failed: timed out after 8s waiting for 1 of its 2 objects to be ready: deployment/"
	held := "deployment/" + ns + "/web (InProgress: "

	res := apply("true", "8s")
	text := res.Stdout + res.Stderr
	if res.Code != 1 || !strings.Contains(text, sentence) || !strings.Contains(text, held) || strings.Contains(text, "configmap/") {
		t.Errorf("text: exit %d, want 1 and the error naming %q only:\n%s", res.Code, held, text)
	}

	res = apply("true", "8s", "-o", "json")
	var results model.Results
	if err := json.Unmarshal([]byte(res.Stdout), &results); err != nil {
		t.Fatalf("-o json: exit %d, %v\n%s\n%s", res.Code, err, res.Stdout, res.Stderr)
	}
	if len(results.Steps) != 1 || !strings.Contains(results.Steps[0].Error, sentence) || !strings.Contains(results.Steps[0].Error, held) {
		t.Errorf("-o json: steps %+v, want the error naming %q", results.Steps, held)
	}
	t.Logf("the step's error: %s", firstOf(results.Steps))

	res = citest.Run(t, g.Workspace, g.Environ)
	summary := g.Read(t, "summary")
	if res.Code != 1 || !strings.Contains(summary, sentence) || !strings.Contains(summary, held) {
		t.Errorf("khook ci: exit %d, want 1 and the summary naming %q:\n%s\n%s", res.Code, held, summary, res.Stdout)
	}
}

func firstOf(steps []model.StepResult) string {
	if len(steps) == 0 {
		return ""
	}
	return steps[0].Error
}
