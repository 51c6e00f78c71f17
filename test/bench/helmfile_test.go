package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/khook/khook/test/helmfilecli"
)

// The helmfile arm (#24): helmfile and the helm-diff plugin, pinned and built
// from source by `make bench-tools` (helm-diff from a git checkout:
// tools/build-helm-diff.sh), read from the user cache. Where they are absent
// the arm is skipped with a message saying how to build them.
const (
	HelmfileVersion = helmfilecli.Version
	HelmDiffVersion = "v3.15.11"
)

// ArmsEnv lists the tools khook is compared with, comma-separated, out of
// "script" and "helmfile"; unset means both. KHOOK_BENCH_KHOOK_ONLY=1 is the
// empty list.
const ArmsEnv = "KHOOK_BENCH_ARMS"

// armOn reports whether the platform benchmark runs the named arm.
func armOn(name string) bool {
	if KhookOnly() {
		return false
	}
	v, ok := os.LookupEnv(ArmsEnv)
	return !ok || slices.Contains(strings.Split(v, ","), name)
}

// benchBin is where the benchmark's tools are cached, keyed by version.
func benchBin(tool, version string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the benchmark's tools: %w", err)
	}
	return filepath.Join(cache, "khook", "bench-bin", tool+"-"+version+"-"+runtime.GOOS+"-"+runtime.GOARCH), nil
}

// helmfileTools returns the helmfile binary and the HELM_PLUGINS directory
// holding helm-diff, or why the arm cannot run.
func helmfileTools() (helmfile, plugins string, why error) {
	dir, err := benchBin("helmfile", HelmfileVersion)
	if err != nil {
		return "", "", err
	}
	if plugins, err = benchBin("helm-plugins-diff", HelmDiffVersion); err != nil {
		return "", "", err
	}
	helmfile = filepath.Join(dir, "helmfile")
	if !fileExists(helmfile) {
		return "", "", fmt.Errorf("helmfile %s is not built at %s: run `make bench-tools HELM_DIFF_SRC=/path/to/helm-diff` (docs/performance.md)", HelmfileVersion, helmfile)
	}
	if diff := filepath.Join(plugins, "diff", "bin", "diff"); !fileExists(diff) {
		return "", "", fmt.Errorf("the helm-diff plugin %s is not built at %s: run test/bench/tools/build-helm-diff.sh with a clone of github.com/databus23/helm-diff (docs/performance.md)", HelmDiffVersion, diff)
	}
	return helmfile, plugins, nil
}

// helmfileCmd runs helmfile on a generated workload's helmfile.yaml with the
// pinned helm CLI and helm-diff. --skip-deps: the local charts have no
// dependencies, so `helm dependency build` per chart would only add time.
func (pb *platformBench) helmfileCmd(args ...string) *exec.Cmd {
	all := append([]string{"--file", pb.hw.Helmfile(), "--helm-binary", pb.env.helm, "--skip-deps"}, args...)
	cmd := exec.Command(pb.env.helmfile, all...)
	cmd.Dir = pb.hw.Dir
	cmd.Env = append(pb.env.toolEnv(), "HELM_PLUGINS="+pb.env.helmPlugins)
	return cmd
}

// helmfileApply is `helmfile apply`: a diff of every release, then an
// upgrade of those that changed.
func (pb *platformBench) helmfileApply(b *testing.B) measured {
	return pb.run(b, "helmfile apply", pb.hw.Prefix, pb.helmfileCmd("apply"))
}

// helmfileDiff is `helmfile diff`, the counterpart of `khook plan --diff`.
func (pb *platformBench) helmfileDiff(b *testing.B) measured {
	return pb.run(b, "helmfile diff", pb.hw.Prefix, pb.helmfileCmd("diff"))
}
