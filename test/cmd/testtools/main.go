// Command testtools builds the pinned tools the tests run, into the user
// cache, each once (the tests build what is missing themselves; this builds
// it ahead, as `make test` does the control plane in the background while
// the first test packages run):
//
//	testtools cluster kubectl helm helmfile
//
// cluster is the control plane (test/clusterbin), kubectl the CLI of its
// Kubernetes (test/scriptapply runs bootstrap scripts with it), helm the helm CLI of go.mod's
// Helm (test/helmcli), helmfile the pinned helmfile (test/helmfilecli: only
// test/helmfilecorpus's stale records and test/bench need it; `make
// test-tools-cli`). The
// builds run at once: on two cores the go command's downloads and links
// leave room for another build. Each takes its tool's lock, so a test that
// needs a tool meanwhile waits for it rather than building it again.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/khook/khook/test/clusterbin"
	"github.com/khook/khook/test/helmcli"
	"github.com/khook/khook/test/helmfilecli"
)

var builders = map[string]func(context.Context, io.Writer) (string, error){
	"cluster":  clusterbin.EnsureBinaries,
	"kubectl":  clusterbin.EnsureKubectl,
	"helm":     helmcli.Build,
	"helmfile": helmfilecli.Build,
}

func main() {
	names := os.Args[1:]
	if len(names) == 0 {
		fmt.Fprintln(os.Stderr, "usage: testtools cluster|kubectl|helm|helmfile ...")
		os.Exit(2)
	}
	for _, n := range names {
		if builders[n] == nil {
			fmt.Fprintf(os.Stderr, "testtools: no tool %q: name cluster, kubectl, helm or helmfile\n", n)
			os.Exit(2)
		}
	}
	out := &lockedWriter{w: os.Stderr}
	var wg sync.WaitGroup
	failed := make(chan error, len(names))
	for _, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := builders[n](context.Background(), out); err != nil {
				failed <- fmt.Errorf("testtools: %s: %w", n, err)
			}
		}()
	}
	wg.Wait()
	close(failed)
	code := 0
	for err := range failed {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// lockedWriter keeps the builds' progress lines whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
