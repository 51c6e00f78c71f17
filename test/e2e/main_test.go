// Package e2e runs the built khook binary against the test cluster: the
// acceptance of a whole apply, as a user or CI runs it.
//
// TestMain builds khook from this tree (or uses $KHOOK_E2E_BIN) and starts
// one cluster (or connects to $KHOOK_TEST_KUBECONFIG, e.g. `make cluster`):
//
//	KHOOK_TEST_KUBECONFIG=$KUBECONFIG go test ./test/e2e/ -run TestJobStep
//	go test ./test/e2e/ -run '^$' -bench ParallelBranches -benchtime 5x
//
// Step specs live in testdata/steps; job pods are steered through their env
// (see podenv), other pods through the harness's khook.test/* annotations.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/e2e/podenv"
	"github.com/khook/khook/test/reporoot"
)

var (
	// kc is the package's cluster; khookBin the binary built from this tree.
	kc       *cluster.Cluster
	khookBin string
	repoRoot string
)

// binEnv names a prebuilt khook binary to test instead of building one.
const binEnv = "KHOOK_E2E_BIN"

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	var err error
	if repoRoot, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "khook-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)

	if khookBin = os.Getenv(binEnv); khookBin == "" {
		khookBin = filepath.Join(tmp, "khook")
		if err := reporoot.BuildKhook(khookBin); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
	}

	if path := os.Getenv(cluster.KubeconfigEnv); path != "" {
		if kc, err = cluster.Connect(context.Background(), path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	} else {
		// A directory of our own: the cluster's data must outlive any
		// clean-up of the harness's default temporary directories.
		kc, err = cluster.Start(context.Background(), cluster.Options{Dir: filepath.Join(tmp, "cluster")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer kc.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := podenv.Install(ctx, kc.Client, "default"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code != 0 && kc.Dir != "" {
		kc.DumpLogs(os.Stderr, 30)
	}
	return code
}
