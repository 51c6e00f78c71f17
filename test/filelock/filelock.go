// Package filelock is the one lock the test tools' builds take (the control
// plane, the helm and helmfile CLIs, the pipeline tools): an exclusive flock
// on a file, so that of several processes wanting a tool at once — test
// binaries of packages started together, `make test`'s background build —
// one builds it and the others wait, then find it built. CPUTime is how
// each build under it says what it cost.
package filelock

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes an exclusive flock on path (creating it and its directory),
// telling progress when it has to wait for another holder, and gives up
// when ctx ends. The returned function releases it.
func Lock(ctx context.Context, path string, progress io.Writer) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the directory of the lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot open the lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(progress, "waiting for another process to finish building (lock %s)\n", path)
		done := make(chan error, 1)
		go func() { done <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
		select {
		case err = <-done:
		case <-ctx.Done():
			f.Close() // the blocked flock goroutine ends with EBADF
			return nil, fmt.Errorf("gave up waiting for the lock %s: %w", path, ctx.Err())
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("cannot lock %s: %w", path, err)
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// CPUTime says how much CPU a finished command used, its children included
// (the go command's compiles and links): what a build costs on a busy
// machine, where its wall time says more about the others.
func CPUTime(st *os.ProcessState) string {
	if st == nil {
		return "CPU time unknown"
	}
	return fmt.Sprintf("%.0f s user, %.0f s system", st.UserTime().Seconds(), st.SystemTime().Seconds())
}
