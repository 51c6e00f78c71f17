// Package helmcli provides the plain helm CLI that tests run beside khook as
// the control: the Helm release khook itself links (go.mod's pin, read from
// the test binary's build info), built once with go install and cached.
package helmcli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
)

// Module is the Go module of the helm CLI.
const Module = "helm.sh/helm/v4"

var (
	once sync.Once
	bin  string
	err  error
)

// Version is the version of Module the test binary was built with.
func Version() (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("the test binary has no build info to read the %s pin from", Module)
	}
	for _, d := range info.Deps {
		if d.Path == Module {
			if d.Replace != nil {
				return d.Replace.Version, nil
			}
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("the test binary does not link %s; the helm CLI version cannot be pinned", Module)
}

// Binary returns the helm CLI, building it into the user cache on first use
// (the same directory test/bench uses, so the two share one build).
func Binary(t testing.TB) string {
	t.Helper()
	once.Do(func() { bin, err = build() })
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func build() (string, error) {
	v, err := Version()
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the helm CLI: %w", err)
	}
	dir := filepath.Join(cache, "khook", "bench-bin", "helm-"+v+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	path := filepath.Join(dir, "helm")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	cmd := exec.Command("go", "install", Module+"/cmd/helm@"+v)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	// Outside this module: a plain module-mode install of the release (the
	// CLI's own dependencies are not all in this module's go.sum).
	cmd.Dir = os.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cannot build the helm CLI %s (go install %s/cmd/helm@%s): %v\n%s", v, Module, v, err, out)
	}
	return path, nil
}
