// Package bench compares a converged re-run of khook with the same bootstrap
// written as a helm + kubectl script (issue #4): writes sent to the API
// server, Helm revisions created and wall time. It is a benchmark only:
//
//	go test ./test/bench -run '^$' -bench ConvergedRerun -benchtime 3x
//
// Without -bench no cluster starts and only the proxy's unit test runs.
package bench

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/test/cluster"
)

var kube *cluster.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run()) // no benchmark asked for: no cluster
	}
	os.Exit(cluster.Main(m, &kube))
}

// Namespaces of the two contenders; the same releases live in each.
const (
	scriptNS = "bench-script"
	khookNS  = "bench-khook"
)

// run is what one converged re-run of a tool did.
type run struct {
	wall      time.Duration
	writes    []string
	revisions int
	output    string
}

func BenchmarkConvergedRerun(b *testing.B) {
	env := newBenchEnv(b)

	// First runs converge both namespaces; they are not measured.
	env.script(b)
	env.khook(b)

	var script, khook run
	for i := 0; i < b.N; i++ {
		s := env.script(b)
		k := env.khook(b)
		script.wall += s.wall
		script.revisions += s.revisions
		script.writes = append(script.writes, s.writes...)
		khook.wall += k.wall
		khook.revisions += k.revisions
		khook.writes = append(khook.writes, k.writes...)
		if i == b.N-1 {
			b.Logf("converged re-run, script writes:\n%s", summarize(s.writes))
			b.Logf("converged re-run, khook writes:\n%s", summarize(k.writes))
			b.Logf("converged re-run, khook output:\n%s", k.output)
		}
	}
	n := float64(b.N)
	b.Logf("per converged re-run (mean of %d): script %.2fs, %.1f writes, %.1f revisions; khook %.2fs, %.1f writes, %.1f revisions; khook takes %.3f of the script's time (%.1fx faster)",
		b.N, script.wall.Seconds()/n, float64(len(script.writes))/n, float64(script.revisions)/n,
		khook.wall.Seconds()/n, float64(len(khook.writes))/n, float64(khook.revisions)/n,
		khook.wall.Seconds()/script.wall.Seconds(), script.wall.Seconds()/khook.wall.Seconds())
	b.ReportMetric(script.wall.Seconds()/n, "script-s/run")
	b.ReportMetric(khook.wall.Seconds()/n, "khook-s/run")
	b.ReportMetric(float64(len(script.writes))/n, "script-writes/run")
	b.ReportMetric(float64(len(khook.writes))/n, "khook-writes/run")
	b.ReportMetric(float64(script.revisions)/n, "script-revisions/run")
	b.ReportMetric(float64(khook.revisions)/n, "khook-revisions/run")
	b.ReportMetric(script.wall.Seconds()/khook.wall.Seconds(), "speedup")
	b.ReportMetric(float64(khook.wall.Nanoseconds())/n, "ns/op")

	// Issue #4's target: only the job's two writes (delete, create), no
	// revision, at most a fifth of the script's time.
	if got := len(khook.writes) / b.N; got != 2 {
		b.Errorf("khook sent %d writes per converged re-run, want 2 (the job's delete and create)", got)
	}
	if khook.revisions != 0 {
		b.Errorf("khook created %d Helm revisions on converged re-runs, want 0", khook.revisions)
	}
	if khook.wall*5 > script.wall {
		b.Errorf("khook took %s per re-run, the script %s: want at most a fifth", khook.wall/time.Duration(b.N), script.wall/time.Duration(b.N))
	}
}

// script runs testdata/bootstrap.sh once.
func (e *benchEnv) script(b *testing.B) run {
	b.Helper()
	cmd := exec.Command("bash", filepath.Join(e.testdata, "bootstrap.sh"))
	cmd.Env = append(e.toolEnv(),
		"HELM="+e.helm, "KUBECTL="+e.kubectl,
		"REPO_URL="+e.repo.URL, "REPO_USER="+e.repo.User, "REPO_PASS="+e.repo.Pass, "NS="+scriptNS)
	return e.measure(b, "script", scriptNS, cmd)
}

// khook runs `khook apply -f testdata/khook.yaml` once.
func (e *benchEnv) khook(b *testing.B) run {
	b.Helper()
	cmd := exec.Command(e.khookBin, "apply", "-f", filepath.Join(e.testdata, "khook.yaml"),
		"--set", "REPO_URL="+e.repo.URL, "--set", "REPO_USER="+e.repo.User, "--set", "NS="+khookNS)
	cmd.Env = append(e.toolEnv(), "KHOOK_SECRET_REPO_PASS="+e.repo.Pass)
	return e.measure(b, "khook", khookNS, cmd)
}

func (e *benchEnv) measure(b *testing.B, name, ns string, cmd *exec.Cmd) run {
	b.Helper()
	before := e.revisions(b, ns)
	e.proxy.take()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	writes := e.proxy.take()
	if err != nil {
		b.Fatalf("%s failed: %v\n%s", name, err, out.String())
	}
	return run{wall: wall, writes: writes, revisions: e.revisions(b, ns) - before, output: out.String()}
}

// revisions counts the Helm release records (one Secret per revision).
func (e *benchEnv) revisions(b *testing.B, ns string) int {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := kube.Client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		b.Fatal(err)
	}
	return len(list.Items)
}

// toolEnv is a clean environment: a private HOME (kubectl's discovery cache,
// Helm's cache and config) and the proxy's kubeconfig.
func (e *benchEnv) toolEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "KUBECONFIG", strings.HasPrefix(k, "HELM_"), strings.HasPrefix(k, "KHOOK_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+e.home, "KUBECONFIG="+e.kubeconfig, "NO_COLOR=1")
}
