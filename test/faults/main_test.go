// Package faults runs the built khook binary through the failures CI runs
// into: a run killed mid-install or mid-upgrade (kill -9, SIGTERM), the API
// server restarted or gone, credentials revoked. Its tests stop and restart
// the API server, so the package has a cluster of its own: no other
// package's tests see the outages. See docs/recovery.md.
package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/awaitline"
	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/reporoot"
)

var (
	kc       *cluster.Cluster
	khookBin string
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if os.Getenv(cluster.KubeconfigEnv) != "" {
		// These tests stop the API server: never someone else's.
		fmt.Fprintln(os.Stderr, "faults: ignoring", cluster.KubeconfigEnv, "- these tests need a cluster of their own")
		os.Unsetenv(cluster.KubeconfigEnv)
	}
	tmp, err := os.MkdirTemp("", "khook-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	khookBin = filepath.Join(tmp, "khook")
	if err := reporoot.BuildKhook(khookBin); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	return cluster.Main(m, &kc)
}

// run is one khook process.
type run struct {
	cmd     *exec.Cmd
	stdout  bytes.Buffer     // read once it exited
	stderr  awaitline.Output // its progress, read while it runs
	started time.Time
	exited  chan struct{} // closed once cmd.Wait has returned
}

// start runs `khook apply -f <spec> -o json` with NAME=value variables and
// extra flags, against kubeconfig (the cluster's when empty).
func start(t *testing.T, specFile, kubeconfig string, vars []string, flags ...string) *run {
	t.Helper()
	if kubeconfig == "" {
		kubeconfig = kc.Kubeconfig
	}
	args := []string{"apply", "-f", specFile, "-o", "json", "--kubeconfig", kubeconfig}
	for _, v := range vars {
		args = append(args, "--set", v)
	}
	args = append(args, flags...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	r := &run{cmd: exec.CommandContext(ctx, khookBin, args...), exited: make(chan struct{})}
	r.cmd.Dir = t.TempDir()
	r.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1", "TERM=dumb"}
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.started = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); r.stderr.Close(); close(r.exited) }()
	return r
}

// result is how a run ended.
type result struct {
	Code    int
	Results model.Results
	Stdout  string
	Stderr  string
	Took    time.Duration
}

// dumpIfFailed, deferred by an await, kills the run and prints its output
// when the await failed the test.
func (r *run) dumpIfFailed(t *testing.T) {
	if t.Failed() {
		_ = r.cmd.Process.Kill()
		<-r.exited
		t.Logf("khook (killed):\nstdout:\n%s\nstderr:\n%s", r.stdout.String(), r.stderr.String())
	}
}

func (r *run) wait(t *testing.T) result {
	t.Helper()
	<-r.exited
	res := result{Code: r.cmd.ProcessState.ExitCode(), Stdout: r.stdout.String(), Stderr: r.stderr.String(), Took: time.Since(r.started)}
	if strings.TrimSpace(res.Stdout) != "" {
		if err := json.Unmarshal(r.stdout.Bytes(), &res.Results); err != nil {
			t.Fatalf("stdout is not a results document: %v\nstdout:\n%s\nstderr:\n%s", err, res.Stdout, res.Stderr)
		}
	}
	return res
}

func apply(t *testing.T, specFile string, vars []string, flags ...string) result {
	t.Helper()
	return start(t, specFile, "", vars, flags...).wait(t)
}

// step returns the named step's result.
func (r result) step(t *testing.T, name string) model.StepResult {
	t.Helper()
	for _, s := range r.Results.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %s in the results\nstdout:\n%s\nstderr:\n%s", name, r.Stdout, r.Stderr)
	return model.StepResult{}
}

func (r result) dump() string { return "stdout:\n" + r.Stdout + "\nstderr:\n" + r.Stderr }

// awaitWaiting waits until the run's progress (stderr, with -o json) has a
// line of step saying what it is waiting for, with every one of parts: the
// proof that the step's wait has started and seen its objects, which an
// object the run created (or a pending release) is not: the run may still
// be between steps or creating the rest. On failure it ends r and prints
// what khook said.
func awaitWaiting(t *testing.T, r *run, step string, within time.Duration, parts ...string) {
	t.Helper()
	defer r.dumpIfFailed(t)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if _, err := r.stderr.Await(ctx, append([]string{"step " + step + ": waiting: "}, parts...)...); err != nil {
		t.Fatalf("step %s never said it was waiting: %v", step, err)
	}
}

// awaitReleaseStatus watches the release's Helm storage Secrets in ns until
// one revision has the status (Helm labels each revision's Secret with it)
// and returns that revision's Secret name. On failure it ends r and prints
// what khook said.
func awaitReleaseStatus(t *testing.T, r *run, ns, release, status string, within time.Duration) string {
	t.Helper()
	defer r.dumpIfFailed(t)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	sel := metav1.ListOptions{LabelSelector: "owner=helm,name=" + release + ",status=" + status}
	secrets := kc.Client.CoreV1().Secrets(ns)
	list, err := secrets.List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) > 0 {
		return list.Items[0].Name
	}
	sel.ResourceVersion = list.ResourceVersion
	w, err := secrets.Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Added || ev.Type == watch.Modified {
			if s, ok := ev.Object.(interface{ GetName() string }); ok {
				return s.GetName()
			}
		}
	}
	t.Fatalf("release %s/%s never became %s within %s", ns, release, status, within)
	return ""
}

// releaseStatuses lists the release's revisions as "v1=deployed" etc., in
// revision order.
func releaseStatuses(t *testing.T, ns, release string) []string {
	t.Helper()
	list, err := kc.Client.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + release})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(list.Items))
	for _, s := range list.Items {
		var v int
		fmt.Sscan(s.Labels["version"], &v)
		if v >= 1 && v <= len(out) {
			out[v-1] = fmt.Sprintf("v%d=%s", v, s.Labels["status"])
		}
	}
	return out
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}
