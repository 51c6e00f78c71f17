package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/test/ci/citest"
)

// GitLab's template with the built binary: the plan job saves the plan file,
// the manual apply job applies exactly it; an out-of-band edit between them
// is refused with plan-changed and nothing is written.
func TestGitLabPlanFileThenManualApply(t *testing.T) {
	ns := kube.Namespace(t)
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "plancheck.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "khook.yaml"), data, 0o644)
	env := func(command string) []string {
		return []string{"GITLAB_CI=true", "CI=true", "HOME=" + dir, "TMPDIR=" + t.TempDir(), "CI_PROJECT_DIR=" + dir,
			"CI_JOB_URL=https://gitlab.example/acme/infra/-/jobs/7", "KHOOK_COMMAND=" + command,
			"KHOOK_VARS=NS=" + ns + "\nREGION=eu-west-1", "KHOOK_KUBECONFIG=" + kubeconfig(t), "KHOOK_IDENTIFIER=prod",
			"KHOOK_PLAN_FILE=.khook/prod.khookplan", "KHOOK_PLAN_KEY=gl-pl4n-k3y"}
	}
	dotenv := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, ".khook", "khook.env"))
		return string(b)
	}
	if res := citest.Run(t, dir, env("plan")); res.Code != 0 || !strings.Contains(res.Stdout, "khook plan: saved the plan to .khook/prod.khookplan (fingerprint ") {
		t.Fatalf("plan job: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if res := citest.Run(t, dir, env("apply")); res.Code != 0 || !strings.Contains(dotenv(), "KHOOK_STATUS=ok") {
		t.Fatalf("apply job: exit %d\n%s\n%s\n%s", res.Code, res.Stdout, res.Stderr, dotenv())
	}

	// The next plan, then an edit in the cluster before someone applies it.
	if res := citest.Run(t, dir, env("plan")); res.Code != 0 {
		t.Fatalf("second plan job: exit %d\n%s", res.Code, res.Stdout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "flags", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["beta"] = "false"
	if cm, err = kube.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := citest.Run(t, dir, env("apply"))
	if res.Code != 1 || !strings.Contains(dotenv(), "KHOOK_FAILURE_REASON=plan-changed") || !strings.Contains(res.Stdout, "flags") {
		t.Fatalf("apply of a stale plan: exit %d\n%s\n%s\n%s", res.Code, res.Stdout, res.Stderr, dotenv())
	}
	if got, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "flags", metav1.GetOptions{}); err != nil || got.ResourceVersion != cm.ResourceVersion {
		t.Errorf("the refused apply wrote the ConfigMap (resourceVersion %s -> %s, %v)", cm.ResourceVersion, got.ResourceVersion, err)
	}
	if strings.Contains(res.Stdout+res.Stderr, "gl-pl4n-k3y") {
		t.Error("the plan key leaked into the job log")
	}
}
