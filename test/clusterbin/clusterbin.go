// Package clusterbin builds the test control plane's binaries (etcd,
// kube-apiserver, the controllers, kwok) from the pinned tools module
// test/tools/controlplane into the user cache, once, under a file lock. It is apart from
// test/cluster, which runs them, so that building needs only the standard
// library: make test's background build (test/cmd/testtools) starts at once
// instead of first compiling client-go.
package clusterbin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/khook/khook/test/filelock"
	"github.com/khook/khook/test/reporoot"
)

// Pinned versions of the control-plane binaries. They must match the
// requirements of test/tools/controlplane/go.mod (TestToolVersionsPinned
// checks that).
const (
	KubernetesVersion = "v1.37.1"
	EtcdVersion       = "v3.7.0"
	KwokVersion       = "v0.8.0"
)

// CacheEnv overrides the directory under which built binaries are cached
// (default: os.UserCacheDir()/khook/cluster-bin).
const CacheEnv = "KHOOK_CLUSTER_CACHE"

// binary describes one control-plane command built from a tools module.
type binary struct {
	name    string // file name in the cache directory
	version string
	pkg     string // main package to build
	ldflags string // -ldflags for go build
}

// binaries is the build order: one at a time, since the machines have two
// cores and the Kubernetes commands share most of their packages.
var binaries = []binary{
	{"kube-apiserver", KubernetesVersion, "k8s.io/kubernetes/cmd/kube-apiserver", kubeVersionLDFlags},
	{"kube-controller-manager", KubernetesVersion, "k8s.io/kubernetes/cmd/kube-controller-manager", kubeVersionLDFlags},
	{"kube-scheduler", KubernetesVersion, "k8s.io/kubernetes/cmd/kube-scheduler", kubeVersionLDFlags},
	{"etcd", EtcdVersion, "go.etcd.io/etcd/server/v3", "-s -w"},
	{"kwok", KwokVersion, "sigs.k8s.io/kwok/cmd/kwok", "-s -w"},
}

// kubeVersionLDFlags stamps the Kubernetes commands the way the release build
// does. Unstamped, kube-apiserver reports v0.0.0-master+$Format:%H$ and every
// chart that runs semverCompare on .Capabilities.KubeVersion fails to render.
var kubeVersionLDFlags = kubeVersionStamp(KubernetesVersion)

func kubeVersionStamp(v string) string {
	major, minor := "", ""
	if parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	const pkg = "k8s.io/component-base/version"
	return strings.Join([]string{
		"-s", "-w", // no symbol table or DWARF: a shorter link, and nothing here debugs them
		"-X " + pkg + ".gitVersion=" + v,
		"-X " + pkg + ".gitMajor=" + major,
		"-X " + pkg + ".gitMinor=" + minor,
		"-X " + pkg + ".gitTreeState=clean",
	}, " ")
}

// buildKey names the cache directory; it changes whenever what a build
// produces does (shared1: etcd and kwok built in the Kubernetes commands'
// module, with its versions of their common dependencies).
const buildKey = "shared1"

// BinDir returns the versioned directory that holds (or will hold) the
// control-plane binaries.
func BinDir() (string, error) {
	root := os.Getenv(CacheEnv)
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("khook test cluster: no cache directory for the control-plane binaries (set %s): %w", CacheEnv, err)
		}
		root = filepath.Join(cache, "khook", "cluster-bin")
	}
	key := fmt.Sprintf("k8s-%s_etcd-%s_kwok-%s_%s-%s_%s", KubernetesVersion, EtcdVersion, KwokVersion, runtime.GOOS, runtime.GOARCH, buildKey)
	return filepath.Join(root, key), nil
}

// EnsureBinaries builds every missing control-plane binary into BinDir and
// returns that directory. Progress goes to progress. Concurrent callers (test
// binaries of several packages starting at once) serialize on a file lock, so
// only the first one builds.
func EnsureBinaries(ctx context.Context, progress io.Writer) (string, error) {
	dir, err := BinDir()
	if err != nil {
		return "", err
	}
	if allPresent(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("khook test cluster: cannot create the binary cache %s: %w", dir, err)
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(dir, ".lock"), progress)
	if err != nil {
		return "", err
	}
	defer unlock()

	moduleDir, err := moduleRoot()
	if err != nil {
		return "", err
	}
	for _, b := range binaries {
		out := filepath.Join(dir, b.name)
		if _, err := os.Stat(out); err == nil {
			continue
		}
		if err := build(ctx, b, moduleDir, out, progress); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// kubectl is the kubectl CLI of the control plane's Kubernetes, for tests
// that run a bootstrap script as written (test/scriptapply): the machine's
// kubectl may be another version, a dispatcher, or missing on CI. It is not
// in binaries, so a package that needs only the control plane does not wait
// for it; make test builds it behind go test (test-tools-kubectl).
var kubectl = binary{"kubectl", KubernetesVersion, "k8s.io/kubernetes/cmd/kubectl", kubeVersionLDFlags}

// EnsureKubectl builds the pinned kubectl into BinDir unless it is there and
// returns its path. The control plane builds first: kubectl shares most of
// its packages, so built after it, it reuses them from the build cache.
func EnsureKubectl(ctx context.Context, progress io.Writer) (string, error) {
	dir, err := EnsureBinaries(ctx, progress)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, kubectl.name)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(dir, ".lock"), progress)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(out); err == nil {
		return out, nil // built while this process waited
	}
	moduleDir, err := moduleRoot()
	if err != nil {
		return "", err
	}
	if err := build(ctx, kubectl, moduleDir, out, progress); err != nil {
		return "", err
	}
	return out, nil
}

func allPresent(dir string) bool {
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(dir, b.name)); err != nil {
			return false
		}
	}
	return true
}

// build compiles one binary with the go command into a temporary file and
// renames it into place, so a killed build never leaves a half-written binary.
func build(ctx context.Context, b binary, moduleDir, out string, progress io.Writer) error {
	fmt.Fprintf(progress, "khook test cluster: building %s %s (first use only; the Kubernetes commands take several minutes)...\n", b.name, b.version)
	start := time.Now()
	tmp := out + ".tmp"
	args := []string{"build", "-p", "2", "-o", tmp}
	if b.ldflags != "" {
		args = append(args, "-ldflags", b.ldflags)
	}
	cmd := exec.CommandContext(ctx, goCommand(), append(args, b.pkg)...)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"),
	)
	var output bytes.Buffer
	cmd.Stdout = &output
	cmd.Stderr = &output
	if err := cmd.Run(); err != nil {
		_ = os.Remove(tmp)
		if ctx.Err() != nil {
			return fmt.Errorf("khook test cluster: building %s %s was interrupted: %w", b.name, b.version, ctx.Err())
		}
		return &BuildError{Binary: b.name, Version: b.version, Output: LastLines(withoutDownloads(output.String()), 6), Err: err}
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("khook test cluster: cannot move the built %s into the cache: %w", b.name, err)
	}
	fmt.Fprintf(progress, "khook test cluster: built %s in %s (%s)\n", b.name, time.Since(start).Round(time.Second), filelock.CPUTime(cmd.ProcessState))
	return nil
}

// BuildError reports a control-plane binary that could not be built, which on
// a fresh machine almost always means the Go module proxy is out of reach.
type BuildError struct {
	Binary, Version string
	Output          string // last lines of the go command's output
	Err             error
}

func (e *BuildError) Error() string {
	out := strings.TrimSpace(e.Output)
	if out == "" {
		out = e.Err.Error()
	}
	return fmt.Sprintf("khook test cluster: cannot build %s %s: %s; the Go module proxy must be reachable to build the test control plane once (set GOPROXY, or run on a machine that can reach it)",
		e.Binary, e.Version, strings.ReplaceAll(out, "\n", " | "))
}

func (e *BuildError) Unwrap() error { return e.Err }

// goCommand finds the go command: go test puts $GOROOT/bin first in PATH, and
// the fallback covers binaries run outside go test.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// moduleRoot locates test/tools/controlplane, the module that pins the
// control plane.
func moduleRoot() (string, error) {
	root, err := reporoot.Dir()
	if err != nil {
		return "", fmt.Errorf("khook test cluster: %w", err)
	}
	return filepath.Join(root, "test", "tools", "controlplane"), nil
}

// withoutDownloads drops the go command's "go: downloading" progress lines.
func withoutDownloads(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "go: downloading ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// LastLines returns the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
