package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// KubeconfigEnv names a kubeconfig of an already running cluster (for
// instance from `make cluster`) for tests to use instead of starting one.
const KubeconfigEnv = "KHOOK_TEST_KUBECONFIG"

// Main runs a test package's tests against one cluster, for TestMain:
//
//	var kube *cluster.Cluster
//
//	func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &kube)) }
//
// It connects to $KHOOK_TEST_KUBECONFIG when set, else starts a cluster
// (building the binaries on first use). If that fails it prints why and
// returns 1 without running any test. When tests fail it prints the tail of
// the component logs and keeps the cluster's directory.
func Main(m *testing.M, c **Cluster) int { return MainWith(m, c, Options{}) }

// MainWith is Main with a cluster started with opts (a single node, no
// StorageClass); a cluster reached through $KHOOK_TEST_KUBECONFIG is used as
// it is.
func MainWith(m *testing.M, c **Cluster, opts Options) int {
	if path := os.Getenv(KubeconfigEnv); path != "" {
		cl, err := Connect(context.Background(), path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		*c = cl
		return m.Run()
	}
	cl, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*c = cl
	code := m.Run()
	if code != 0 {
		cl.DumpLogs(os.Stderr, 40)
		fmt.Fprintf(os.Stderr, "khook test cluster: tests failed; keeping %s for inspection\n", cl.Dir)
		cl.ownDir = false
	}
	cl.Stop()
	return code
}

// Connect uses the cluster behind an existing kubeconfig; it checks that the
// API server answers /readyz. Stop does not stop such a cluster.
func Connect(ctx context.Context, kubeconfig string) (*Cluster, error) {
	c := &Cluster{}
	if err := c.useKubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rc := rest.CopyConfig(c.RESTConfig)
	client, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("khook test cluster: cannot build an HTTP client for %s: %w", kubeconfig, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rc.Host+"/readyz", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("khook test cluster: the cluster of %s=%s does not answer: %w (is `make cluster` still running?)", KubeconfigEnv, kubeconfig, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("khook test cluster: the cluster of %s=%s is not ready: /readyz says %s", KubeconfigEnv, kubeconfig, resp.Status)
	}
	return c, nil
}
