package cluster

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PrintedLogNamespace is the namespace whose containers printed what a test
// chose with PrintLog, for tests of what khook shows of a log: a job whose
// container prints the Secret it mounts, say. kwok cannot run the
// container; it serves a file for the pod's logs, chosen by namespace
// (a ClusterLogs rule ahead of the one for every other pod).
const PrintedLogNamespace = "khook-printed-log"

// printedLog is the file kwok serves for PrintedLogNamespace's pods.
func printedLog(dir string) string { return filepath.Join(dir, "printed.log") }

var printedMu sync.Mutex

// PrintLog makes every container of every pod in PrintedLogNamespace, the
// current instance and the previous one, have printed lines (the last on
// stderr) until t ends, and returns the namespace, created if missing,
// with its default ServiceAccount. One test at a time holds it: others
// wait. The namespace outlives t; delete what the test made in it. A
// connected cluster (Connect) skips t: its kwok's files are not here.
func (c *Cluster) PrintLog(t testing.TB, lines ...string) string {
	t.Helper()
	if c.Dir == "" {
		t.Skip("khook test cluster: a connected cluster's kwok serves no chosen logs")
	}
	printedMu.Lock()
	t.Cleanup(printedMu.Unlock)
	if err := writeCRILog(printedLog(c.Dir)+".tmp", lines); err != nil {
		t.Fatal(err)
	}
	// A rename: kwok never reads half a file.
	if err := os.Rename(printedLog(c.Dir)+".tmp", printedLog(c.Dir)); err != nil {
		t.Fatalf("khook test cluster: cannot write the printed log: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: PrintedLogNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("khook test cluster: cannot create namespace %s: %v", PrintedLogNamespace, err)
	}
	if err := c.awaitServiceAccount(ctx, PrintedLogNamespace); err != nil {
		t.Fatalf("khook test cluster: namespace %s has no default ServiceAccount: %v", PrintedLogNamespace, err)
	}
	return PrintedLogNamespace
}
