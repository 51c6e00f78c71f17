// Package pipelines runs khook's CI integrations under real runner
// implementations against the test control plane: the GitLab CI/CD
// component under gitlab-ci-local, the GitHub Action's example workflows
// under nektos/act, both with podman and images built from the checkout.
package pipelines

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/cluster"
)

var kube *cluster.Cluster

func TestMain(m *testing.M) {
	code := cluster.Main(m, &kube)
	citest.RemoveBuilds()
	os.Exit(code)
}

// secretValue is a KHOOK_SECRET_ variable's value: no log may show it.
const secretValue = "s3cr3t-t0ken-9f2c"

// specYAML is the spec both runners apply: a ConfigMap to drift and a
// Secret holding the secret variable.
const specYAML = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: pipelines-e2e
steps:
  - name: settings
    apply:
      namespace: ${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: settings
            data:
              region: eu-west-1
  - name: token
    needs: [settings]
    apply:
      namespace: ${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: Secret
            metadata:
              name: token
            stringData:
              token: ${DB_PASSWORD}
`

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyInto(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dst, string(data))
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, string(data))
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// editApplied checks that the spec's ConfigMap was applied, then edits it
// the way someone with kubectl would: drift.
func editApplied(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the apply did not create ConfigMap %s/settings: %v", ns, err)
	}
	cm.Data["region"] = "elsewhere"
	if _, err := kube.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("editing ConfigMap %s/settings: %v", ns, err)
	}
}

// parseEnv reads KEY=value lines (a dotenv report).
func parseEnv(s string) map[string]string {
	env := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	return env
}
