// Package scriptapply runs real bootstrap scripts of the corpus
// (test/testdata/scripts), and one written here, as written, with the
// pinned helm and kubectl, against one test control plane, and the spec
// `khook import script` makes of each with khook against another, and
// compares the objects each made (issue #46: the import does what the
// script does). The files a script reads are not vendored; each case stands
// small real-shaped ones in (testdata/inputs).
package scriptapply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/clusterbin"
	"github.com/khook/khook/test/reporoot"
)

var (
	// scriptKube runs the scripts, khookKube the imported specs: two
	// clusters, so each side starts clean and nothing is removed between.
	scriptKube, khookKube *cluster.Cluster
	khookBin              string
	kubectlBin            string
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if os.Getenv(cluster.KubeconfigEnv) != "" {
		// Each side needs a clean cluster of its own: never someone else's.
		fmt.Fprintln(os.Stderr, "scriptapply: ignoring", cluster.KubeconfigEnv, "- these tests start two clean clusters of their own")
	}
	var err error
	tmp, err := os.MkdirTemp("", "khook-scriptapply-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	khookBin = filepath.Join(tmp, "khook")
	if err := reporoot.BuildKhook(khookBin); err != nil {
		fmt.Fprintln(os.Stderr, "scriptapply:", err)
		return 1
	}
	// make test builds kubectl behind go test (test-tools-kubectl); this
	// waits on its lock, or builds it on a machine that has not.
	if kubectlBin, err = clusterbin.EnsureKubectl(context.Background(), os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// One node is enough: no chart here spreads its pods.
	opts := cluster.Options{Nodes: 1, NoStorageClass: true}
	for _, c := range []**cluster.Cluster{&scriptKube, &khookKube} {
		if *c, err = cluster.Start(context.Background(), opts); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer (*c).Stop()
	}
	code := m.Run()
	if code != 0 {
		scriptKube.DumpLogs(os.Stderr, 20)
		khookKube.DumpLogs(os.Stderr, 20)
	}
	return code
}
