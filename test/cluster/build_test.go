package cluster_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/clusterbin"
)

// The versions in the cache key must be the ones the tools module builds.
func TestToolVersionsPinned(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "tools", "controlplane", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"k8s.io/kubernetes " + clusterbin.KubernetesVersion,
		"go.etcd.io/etcd/server/v3 " + clusterbin.EtcdVersion,
		"sigs.k8s.io/kwok " + clusterbin.KwokVersion,
	} {
		// A lone require line, or a line of a require block.
		if !regexp.MustCompile(`(?m)^(require |\t)` + regexp.QuoteMeta(want) + `$`).Match(b) {
			t.Errorf("test/tools/controlplane/go.mod does not require %s", want)
		}
	}
}

// offlineEnv is the environment of a fresh machine that cannot reach the
// module proxy: empty binary and module caches, GOPROXY=off.
func offlineEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, cluster.KubeconfigEnv+"=") {
			env = append(env, kv)
		}
	}
	return append(env,
		clusterbin.CacheEnv+"="+t.TempDir(),
		"GOMODCACHE="+t.TempDir(),
		"GOPROXY=off",
		"GOFLAGS=-modcacherw", // lets t.TempDir remove whatever go writes there
	)
}

// Without the module proxy, a test package's TestMain fails at once with one
// clear sentence: no panic, no hang, no test run.
func TestNoProxyFailsClearly(t *testing.T) {
	if os.Getenv("KHOOK_IN_NO_PROXY_TEST") != "" {
		return
	}
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestNoProxyFailsClearly$", "-test.v")
	cmd.Env = append(offlineEnv(t), "KHOOK_IN_NO_PROXY_TEST=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("test binary without proxy: %v, want exit status 1; output:\n%s", err, out.String())
	}
	got := out.String()
	want := "khook test cluster: cannot build kube-apiserver " + clusterbin.KubernetesVersion + ": "
	if !strings.Contains(got, want) || !strings.Contains(got, "the Go module proxy must be reachable") {
		t.Errorf("output does not say which binary failed and why; got:\n%s", got)
	}
	for _, bad := range []string{"panic", "=== RUN"} {
		if strings.Contains(got, bad) {
			t.Errorf("output contains %q:\n%s", bad, got)
		}
	}
	t.Logf("failed in %s with:\n%s", time.Since(start).Round(time.Millisecond), got)
}
