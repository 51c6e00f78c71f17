// Package helmcli provides the plain helm CLI that tests run beside khook as
// the control: the Helm release khook itself links (go.mod's pin), built
// once in this module and cached.
package helmcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/khook/khook/test/filelock"
	"github.com/khook/khook/test/reporoot"
)

// Module is the Go module of the helm CLI.
const Module = "helm.sh/helm/v4"

var (
	once sync.Once
	bin  string
	err  error
)

// Version is the version of Module that go.mod pins (a test binary's build
// info does not list its dependencies).
func Version() (string, error) {
	root, err := reporoot.Dir()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", Module)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cannot read the %s pin from go.mod (go list -m %s): %v", Module, Module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Path is where Build puts the helm CLI, built or not (helmfile prints the
// helm it ran, so test/helmfilecorpus's records of its output name it).
func Path() (string, error) {
	v, err := Version()
	if err != nil {
		return "", err
	}
	return pathOf(v)
}

func pathOf(version string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the helm CLI: %w", err)
	}
	return filepath.Join(cache, "khook", "bench-bin", "helm-"+version+"-"+runtime.GOOS+"-"+runtime.GOARCH, "helm"), nil
}

// Binary returns the helm CLI, building it into the user cache on first use
// (the same directory test/bench uses, so the two share one build).
func Binary(t testing.TB) string {
	t.Helper()
	once.Do(func() { bin, err = Build(context.Background(), io.Discard) })
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Build builds the helm CLI into the user cache unless it is there, and
// returns its path; of several processes building at once (`make test`'s
// background build, test packages) one builds and the others wait for it.
func Build(ctx context.Context, progress io.Writer) (string, error) {
	v, err := Version()
	if err != nil {
		return "", err
	}
	path, err := pathOf(v)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	unlock, err := filelock.Lock(ctx, dir+".lock", progress)
	if err != nil {
		return "", fmt.Errorf("cannot build the helm CLI %s: %w", v, err)
	}
	defer unlock()
	if _, err := os.Stat(path); err == nil {
		return path, nil // built while this process waited
	}
	fmt.Fprintf(progress, "building the helm CLI %s...\n", v)
	start := time.Now()
	root, err := reporoot.Dir()
	if err != nil {
		return "", err
	}
	// Built in this module (go.mod's tool directive keeps the CLI's packages
	// in its graph), not with `go install …@v`: the CLI is then the Helm SDK
	// khook links, with go.mod's dependency versions, and it links from the
	// packages khook's own tests compiled instead of compiling Helm's whole
	// dependency graph a second time in a run from nothing. -s -w: no symbol
	// table or DWARF, a shorter link; written aside, renamed when whole.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot build the helm CLI %s: %w", v, err)
	}
	tmp := path + ".tmp"
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-s -w", "-o", tmp, Module+"/cmd/helm")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cannot build the helm CLI %s (go build %s/cmd/helm in %s): %v\n%s", v, Module, root, err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("cannot build the helm CLI %s: %w", v, err)
	}
	fmt.Fprintf(progress, "built the helm CLI %s in %s\n", v, time.Since(start).Round(time.Second))
	return path, nil
}
