// Package helmcli provides the plain helm CLI that tests run beside khook as
// the control: the Helm release khook itself links (go.mod's pin), built
// once with go install and cached.
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
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", Module)
	cmd.Dir = filepath.Dir(file)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cannot read the %s pin from go.mod (go list -m %s): %v", Module, Module, err)
	}
	return strings.TrimSpace(string(out)), nil
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
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the helm CLI: %w", err)
	}
	dir := filepath.Join(cache, "khook", "bench-bin", "helm-"+v+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	path := filepath.Join(dir, "helm")
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
	// -s -w: no symbol table or DWARF, a shorter link; go install writes
	// the binary into place only once it is whole.
	cmd := exec.CommandContext(ctx, "go", "install", "-ldflags", "-s -w", Module+"/cmd/helm@"+v)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	// Outside this module: a plain module-mode install of the release (the
	// CLI's own dependencies are not all in this module's go.sum).
	cmd.Dir = os.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cannot build the helm CLI %s (go install %s/cmd/helm@%s): %v\n%s", v, Module, v, err, out)
	}
	fmt.Fprintf(progress, "built the helm CLI %s in %s\n", v, time.Since(start).Round(time.Second))
	return path, nil
}
