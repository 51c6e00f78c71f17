// Package reporoot finds the khook source tree for tests and test tools.
//
// runtime.Caller alone does not: `make test` builds with -trimpath (the
// release's flags, so the static khook that the image and release tests
// build links from the packages the tests already compiled), and under
// -trimpath a source file's path is its import path, not a file.
package reporoot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

const module = "github.com/khook/khook"

// startDir is the working directory when the program started: go test runs
// a package's tests in its source directory, and a test may chdir later.
var startDir, _ = os.Getwd()

// Dir returns the module root: above this file when its path is a real one
// (a build without -trimpath), else the nearest directory at or above the
// starting working directory whose go.mod declares the module.
func Dir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if d := filepath.Join(filepath.Dir(file), "..", ".."); isRoot(d) {
			return filepath.Clean(d), nil
		}
	}
	for d := startDir; d != ""; d = filepath.Dir(d) {
		if isRoot(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", errors.New("cannot find the khook source tree (a go.mod declaring " + module + ") at or above " + startDir + ": run from inside it")
}

// MustDir is Dir for tests and test helpers, which cannot go on without it.
func MustDir() string {
	d, err := Dir()
	if err != nil {
		panic(err)
	}
	return d
}

func isRoot(d string) bool {
	b, err := os.ReadFile(filepath.Join(d, "go.mod"))
	return err == nil && bytes.HasPrefix(b, []byte("module "+module+"\n"))
}

// BuildKhook builds the khook of this source tree into dst, with the
// test's own build flags (make test's CGO_ENABLED=0 -trimpath: it links
// from the packages go test compiled).
func BuildKhook(dst string) error {
	root, err := Dir()
	if err != nil {
		return err
	}
	build := exec.Command("go", "build", "-o", dst, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("cannot build khook: %v\n%s", err, out)
	}
	return nil
}
