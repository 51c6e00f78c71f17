package e2e

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/e2e/podenv"
)

const (
	jobPassword = "j0b-pr1nted-pa55word"
	jobKey      = "-----BEGIN TEST KEY-----\nMIIBOgIBAAJBAKjobPrintedKeyLine1\njobPrintedSecondKeyLine42\n-----END TEST KEY-----"
)

// TestJobLogMasksTheSecretItPrints: a job step takes a Secret (env
// valueFrom and a volume) and its container prints it (the password, and
// the key mounted from the volume, line by line), then fails. The log tail
// khook shows holds *** where the values were, in the terminal, -o json,
// and khook ci's log, summary, outputs and results; the values are in none
// of them, raw, base64 or line by line.
func TestJobLogMasksTheSecretItPrints(t *testing.T) {
	lines := []string{"migrate: connecting as app", "migrate: password=" + jobPassword}
	for _, l := range strings.Split(jobKey, "\n") {
		lines = append(lines, "migrate: key "+l)
	}
	lines = append(lines, "migrate: giving up")
	ns := kube.PrintLog(t, lines...)
	ctx := context.Background()
	if err := podenv.Install(ctx, kube.Client, ns); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "job-db", Namespace: ns}, StringData: map[string]string{"password": jobPassword, "key": jobKey}}
	if _, err := kube.Client.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		bg := metav1.DeletePropagationBackground
		_ = kube.Client.BatchV1().Jobs(ns).Delete(context.Background(), "print-secret", metav1.DeleteOptions{PropagationPolicy: &bg})
		_ = kube.Client.CoreV1().Secrets(ns).Delete(context.Background(), "job-db", metav1.DeleteOptions{})
	})
	sinks := map[string]string{}

	// The CLI: the terminal, then -o json.
	dir := t.TempDir()
	spec, err := os.ReadFile(filepath.Join("testdata", "joblog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "khook.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"KUBECONFIG=" + kube.Kubeconfig, "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}
	for _, out := range []string{"text", "json"} {
		res := citest.Run(t, dir, env, "apply", "-f", "khook.yaml", "--set", "NS="+ns, "-o", out)
		if res.Code != 1 {
			t.Fatalf("apply -o %s exit %d, want 1 (the job fails)\n%s\n%s", out, res.Code, res.Stdout, res.Stderr)
		}
		if !strings.Contains(res.Stdout, "migrate: password=***") || !strings.Contains(res.Stdout, "migrate: key ***") {
			t.Errorf("apply -o %s: the job's log tail does not show the values masked:\n%s", out, res.Stdout)
		}
		sinks["apply -o "+out+" stdout"], sinks["apply -o "+out+" stderr"] = res.Stdout, res.Stderr
	}

	// khook ci: its log, the summary, the outputs and results.json.
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "joblog.yaml", map[string]string{"command": "apply", "comment": "always", "vars": "NS=" + ns})
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 1 {
		t.Fatalf("khook ci apply exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "::add-mask::"+jobPassword) {
		t.Error("khook ci does not announce the job's password with ::add-mask::")
	}
	summary := g.Read(t, "summary")
	if !strings.Contains(summary, "migrate: password=***") {
		t.Errorf("the summary does not show the job's log tail masked:\n%s", summary)
	}
	sinks["ci stdout"], sinks["ci stderr"] = withoutMasks(res.Stdout), res.Stderr
	sinks["ci GITHUB_OUTPUT"], sinks["ci summary"] = g.Read(t, "output"), summary
	for f, body := range readDir(t, filepath.Join(g.Workspace, ".khook")) {
		sinks["ci "+f] = body
	}
	for i, c := range srv.Comments(7) {
		sinks["comment "+string(rune('0'+i))] = c.Body
	}
	if sinks["ci results.json"] == "" {
		t.Error("khook ci wrote no results.json: the test would prove nothing there")
	}
	for name, text := range sinks {
		for _, s := range jobNeedles() {
			if strings.Contains(text, s) {
				t.Errorf("%q leaked into %s", s, name)
			}
		}
	}
}

// jobNeedles: the values in raw, base64 and per-line form.
func jobNeedles() []string {
	out := []string{jobPassword, jobKey}
	for _, v := range []string{jobPassword, jobKey} {
		out = append(out, base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)))
	}
	for _, l := range strings.Split(jobKey, "\n") {
		if !strings.HasPrefix(l, "-----") {
			out = append(out, l, base64.StdEncoding.EncodeToString([]byte(l)))
		}
	}
	return out
}
