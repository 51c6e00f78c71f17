// Package bench compares khook with the same bootstrap written as a helm +
// kubectl script: a converged re-run of a small bootstrap (issue #4: writes
// sent to the API server, Helm revisions created and wall time) and the
// generated platform workload of issue #14 (platform.go; requests by verb,
// writes, peak RSS). It is a benchmark only (README.md):
//
//	go test ./test/bench -run '^$' -bench ConvergedRerun -benchtime 3x
//	go test ./test/bench -run '^$' -bench Platform -benchtime 1x
//
// Without -bench no cluster starts and only the figures unit test runs.
package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	dryRuns   int // server-side dry runs (khook's converged checks): no write
	revisions int
	output    string
}

// rounds of converged re-runs per benchmark iteration: the machine is
// shared, so wall times are compared by their medians.
const rounds = 3

// BenchmarkConvergedRerun measures the whole bootstrap (issue #4's target:
// khook sends only the job's two writes, creates no revision and takes at
// most a fifth of the script's time), then the same without the job, whose
// completion (about a second of Job-controller latency, the same for both)
// bounds how fast any tool can re-run the whole bootstrap.
func BenchmarkConvergedRerun(b *testing.B) {
	env := newBenchEnv(b)
	// First runs converge both namespaces; they are not measured.
	env.script(b, true)
	env.khook(b, true)

	b.Run("bootstrap", func(b *testing.B) {
		s, k := env.compare(b, true)
		if k.writes != 2 {
			b.Errorf("khook sent %.1f writes per converged re-run, want 2 (the job's delete and create)", k.writes)
		}
		if k.revisions != 0 {
			b.Errorf("khook created %.1f Helm revisions per converged re-run, want 0", k.revisions)
		}
		if k.median*5 > s.median {
			b.Errorf("khook took %s per re-run (median), the script %s: want at most a fifth", k.median, s.median)
		}
	})
	b.Run("without-job", func(b *testing.B) {
		_, k := env.compare(b, false)
		if k.writes != 0 || k.revisions != 0 {
			b.Errorf("khook sent %.1f writes and created %.1f revisions per converged re-run without the job, want none", k.writes, k.revisions)
		}
	})
}

// compare re-runs the script and khook in turns and reports their figures.
func (e *benchEnv) compare(b *testing.B, job bool) (script, khook figures) {
	var sr, kr []run
	for i := 0; i < b.N; i++ {
		for range rounds {
			sr = append(sr, e.script(b, job))
			kr = append(kr, e.khook(b, job))
		}
	}
	last := len(kr) - 1
	b.Logf("converged re-run, script writes:\n%s", summarize(sr[last].writes))
	b.Logf("converged re-run, khook writes:\n%s", summarize(kr[last].writes))
	b.Logf("converged re-run, khook output:\n%s", kr[last].output)

	s, k := summarizeRuns(sr), summarizeRuns(kr)
	b.Logf("per converged re-run (%d runs each): script median %.2fs (min %.2fs), %.1f writes, %.1f revisions; khook median %.2fs (min %.2fs), %.1f writes (%.1f dry runs), %.1f revisions; khook takes %.3f of the script's time (%.1fx faster)",
		len(kr), s.median.Seconds(), s.min.Seconds(), s.writes, s.revisions,
		k.median.Seconds(), k.min.Seconds(), k.writes, k.dryRuns, k.revisions,
		k.median.Seconds()/s.median.Seconds(), s.median.Seconds()/k.median.Seconds())
	b.ReportMetric(s.median.Seconds(), "script-s/run")
	b.ReportMetric(k.median.Seconds(), "khook-s/run")
	b.ReportMetric(s.writes, "script-writes/run")
	b.ReportMetric(k.writes, "khook-writes/run")
	b.ReportMetric(s.revisions, "script-revisions/run")
	b.ReportMetric(k.revisions, "khook-revisions/run")
	b.ReportMetric(s.median.Seconds()/k.median.Seconds(), "speedup")
	b.ReportMetric(float64(k.median.Nanoseconds()), "ns/op")
	return s, k
}

// summarize groups writes: "2 × DELETE /apis/batch/v1/namespaces/ns/jobs/x".
func summarize(writes []string) string {
	counts := map[string]int{}
	for _, w := range writes {
		counts[w]++
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "    %d × %s\n", counts[k], k)
	}
	return b.String()
}

// figures are one tool's re-runs: median and fastest wall time, mean writes
// and revisions.
type figures struct {
	median, min                time.Duration
	writes, dryRuns, revisions float64
}

func summarizeRuns(runs []run) figures {
	walls := make([]time.Duration, len(runs))
	var f figures
	for i, r := range runs {
		walls[i] = r.wall
		f.writes += float64(len(r.writes))
		f.dryRuns += float64(r.dryRuns)
		f.revisions += float64(r.revisions)
	}
	slices.Sort(walls)
	n := float64(len(runs))
	f.writes, f.dryRuns, f.revisions = f.writes/n, f.dryRuns/n, f.revisions/n
	f.median, f.min = walls[len(walls)/2], walls[0]
	return f
}

// script runs testdata/bootstrap.sh once (without its job unless job).
func (e *benchEnv) script(b *testing.B, job bool) run {
	b.Helper()
	cmd := exec.Command("bash", filepath.Join(e.testdata, "bootstrap.sh"))
	cmd.Env = append(e.toolEnv(),
		"HELM="+e.helm, "KUBECTL="+e.kubectl,
		"REPO_URL="+e.repo.URL, "REPO_USER="+e.repo.User, "REPO_PASS="+e.repo.Pass, "NS="+scriptNS, fmt.Sprintf("JOB=%t", job))
	return e.measure(b, "script", scriptNS, cmd)
}

// khook runs `khook apply -f testdata/khook.yaml` once (the job step
// excluded by when: unless job).
func (e *benchEnv) khook(b *testing.B, job bool) run {
	b.Helper()
	cmd := exec.Command(e.khookBin, "apply", "-f", filepath.Join(e.testdata, "khook.yaml"),
		"--set", "REPO_URL="+e.repo.URL, "--set", "REPO_USER="+e.repo.User, "--set", "NS="+khookNS, "--set", fmt.Sprintf("JOB=%t", job))
	cmd.Env = append(e.toolEnv(), "KHOOK_SECRET_REPO_PASS="+e.repo.Pass)
	return e.measure(b, "khook", khookNS, cmd)
}

func (e *benchEnv) measure(b *testing.B, name, ns string, cmd *exec.Cmd) run {
	b.Helper()
	before := e.revisions(b, ns)
	e.proxy.Writes()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	writes, dryRuns := e.proxy.Writes()
	if err != nil {
		b.Fatalf("%s failed: %v\n%s", name, err, out.String())
	}
	return run{wall: wall, writes: writes, dryRuns: len(dryRuns), revisions: e.revisions(b, ns) - before, output: out.String()}
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
		case k == "HOME", k == "KUBECONFIG", strings.HasPrefix(k, "HELM_"), strings.HasPrefix(k, "KHOOK_"),
			k == "GITHUB_ACTIONS", k == "GITLAB_CI": // khook ci: the plain platform
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+e.home, "KUBECONFIG="+e.kubeconfig, "NO_COLOR=1")
}
