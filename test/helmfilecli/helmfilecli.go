// Package helmfilecli provides the helmfile CLI that tests run beside
// `khook import helmfile` as the control: the pinned release, built once
// from its module (fetched through the Go module proxy) and cached in the
// user cache, where `make bench-tools` puts it too.
package helmfilecli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/khook/khook/test/filelock"
)

const (
	// Module is the Go module of the helmfile CLI.
	Module = "github.com/helmfile/helmfile"
	// Version is the helmfile release the tests and the benchmark compare
	// with (the Makefile's HELMFILE_VERSION says the same for bench-tools).
	Version = "v1.8.0"
)

var (
	once sync.Once
	bin  string
	err  error
)

// Binary returns the helmfile CLI, building it into the user cache on first
// use. A failed build fails the test: the comparison it serves is part of
// the suite, not optional.
func Binary(t testing.TB) string {
	t.Helper()
	once.Do(func() { bin, err = Build(context.Background(), io.Discard) })
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Dir is where the binary is cached (the directory test/bench reads).
func Dir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the helmfile CLI: %w", err)
	}
	return filepath.Join(cache, "khook", "bench-bin", "helmfile-"+Version+"-"+runtime.GOOS+"-"+runtime.GOARCH), nil
}

// Build builds the helmfile CLI into the user cache unless it is there, and
// returns its path; of several processes building at once (`make test`'s
// background build, test packages) one builds and the others wait for it.
func Build(ctx context.Context, progress io.Writer) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "helmfile")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	unlock, err := filelock.Lock(ctx, dir+".lock", progress)
	if err != nil {
		return "", fmt.Errorf("cannot build helmfile %s: %w", Version, err)
	}
	defer unlock()
	if _, err := os.Stat(path); err == nil {
		return path, nil // built while this process waited
	}
	fmt.Fprintf(progress, "building helmfile %s...\n", Version)
	start := time.Now()
	// The module's own go.mod decides its dependencies: download it, then
	// build inside its directory (go install would refuse its replace
	// directives).
	dl := exec.CommandContext(ctx, "go", "mod", "download", "-json", Module+"@"+Version)
	dl.Env = append(os.Environ(), "GOFLAGS=")
	dl.Dir = os.TempDir()
	out, err := dl.Output()
	if err != nil {
		return "", fmt.Errorf("cannot download helmfile %s (go mod download %s@%s): %v", Version, Module, Version, exitText(err))
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("cannot download helmfile %s: go mod download said %q", Version, firstNonEmpty(mod.Error, string(out)))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot create %s for the helmfile CLI: %w", dir, err)
	}
	// Build beside the final name and rename, so that a concurrent test
	// process never runs a half-written binary.
	tmp := filepath.Join(dir, fmt.Sprintf(".helmfile-%d", os.Getpid()))
	// -s -w: no symbol table or DWARF, a shorter link.
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, "-ldflags", "-s -w -X go.szostok.io/version.version="+Version, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=auto")
	cmd.Dir = mod.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("cannot build helmfile %s in %s (go build): %v\n%s", Version, mod.Dir, err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("cannot move the helmfile CLI into %s: %w", dir, err)
	}
	fmt.Fprintf(progress, "built helmfile %s in %s (%s)\n", Version, time.Since(start).Round(time.Second), filelock.CPUTime(cmd.ProcessState))
	return path, nil
}

func exitText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return string(ee.Stderr)
	}
	return err.Error()
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
