// Package cluster runs a real Kubernetes control plane for khook's tests:
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler built from
// pinned sources, with kwok simulating three nodes in two zones and their
// pods (nodes.go), and a default StorageClass whose provisioner runs in
// process (storage.go). No containers run; pods follow the kwok stages in
// stages/ (see FailAnnotation and friends). One cluster serves a whole test
// package (see Main); tests isolate themselves with Namespace.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/khook/khook/test/clusterbin"
)

// Options configures Start. The zero value is ready to use.
type Options struct {
	// Dir holds the cluster's data, certificates, kubeconfig and logs. Default:
	// a new temporary directory, removed by Stop.
	Dir string
	// Progress receives build and start-up messages. Default: os.Stderr.
	Progress io.Writer
	// StartTimeout bounds start-up once the binaries exist. Default: 2 minutes.
	StartTimeout time.Duration
	// Nodes is the number of simulated nodes. Default: DefaultNodes; a test
	// about a single node asks for 1.
	Nodes int
	// NoStorageClass leaves out the default StorageClass and its provisioner:
	// claims without a class then stay Pending, as on a cluster without one.
	NoStorageClass bool
}

// Cluster is a running control plane, or one reached through a kubeconfig
// (Connect).
type Cluster struct {
	// Kubeconfig is the path of an admin kubeconfig (system:masters).
	Kubeconfig string
	// RESTConfig is the admin client configuration, without client-side rate
	// limiting.
	RESTConfig *rest.Config
	// Client is a clientset built from RESTConfig.
	Client kubernetes.Interface
	// Dir holds the cluster's files; empty for a connected cluster.
	Dir string

	ownDir   bool
	progress io.Writer
	stopping atomic.Bool
	procs    []*process
	egress   *egressProxy
	storage  *storage // nil without a StorageClass
	nodes    int
	stopOnce sync.Once
}

// Start builds the binaries if they are missing (clusterbin.EnsureBinaries), then
// starts a cluster on free loopback ports and returns once it is usable: the
// API server is ready, the node is Ready without the not-ready taint, and the
// default ServiceAccount exists. Call Stop when done.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	bins, err := clusterbin.EnsureBinaries(ctx, opts.Progress)
	if err != nil {
		return nil, err
	}
	if opts.Nodes <= 0 {
		opts.Nodes = DefaultNodes
	}
	c := &Cluster{Dir: opts.Dir, progress: opts.Progress, nodes: opts.Nodes}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "khook-cluster-"); err != nil {
			return nil, fmt.Errorf("khook test cluster: cannot create a temporary directory: %w", err)
		}
		c.ownDir = true
	}
	track(c)
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := c.start(ctx, bins, !opts.NoStorageClass); err != nil {
		if _, exited := err.(*exitError); !exited {
			c.DumpLogs(opts.Progress, 20)
		}
		c.Stop()
		return nil, err
	}
	for _, p := range c.procs {
		go c.reportCrash(p)
	}
	return c, nil
}

// reportCrash says at once when a component dies under running tests, which
// would otherwise only see time-outs.
func (c *Cluster) reportCrash(p *process) {
	<-p.done
	if !c.stopping.Load() && !p.expectExit.Load() {
		fmt.Fprintf(c.progress, "khook test cluster: %s exited unexpectedly (%v); last log lines:\n%s\n", p.name, p.err, logTail(p.logPath, 15))
	}
}

func (c *Cluster) start(ctx context.Context, bins string, withStorage bool) error {
	start := time.Now()
	logDir := filepath.Join(c.Dir, "logs")
	for _, d := range []string{logDir, filepath.Join(c.Dir, "pki"), filepath.Join(c.Dir, "etcd")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("khook test cluster: cannot create %s: %w", d, err)
		}
	}
	certs, err := newPKI(filepath.Join(c.Dir, "pki"))
	if err != nil {
		return fmt.Errorf("khook test cluster: cannot create certificates: %w", err)
	}
	ports, err := freePorts(6)
	if err != nil {
		return err
	}
	etcdPort, peerPort, apiPort, kwokPort, kcmPort, schedPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]

	token, err := c.writeKubeconfig(certs, apiPort)
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(c.Dir, "pki", "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(token+`,khook-admin,khook-admin,"system:masters"`+"\n"), 0o600); err != nil {
		return fmt.Errorf("khook test cluster: cannot write the token file: %w", err)
	}
	kwokConfig, err := writeKwokConfig(c.Dir)
	if err != nil {
		return err
	}
	auditFlags, err := writeAuditPolicy(c.Dir)
	if err != nil {
		return err
	}

	// Before the API server: it must never dial a ClusterIP or pod IP itself.
	egress, egressConfig, err := startEgressProxy(c.Dir)
	if err != nil {
		return err
	}
	c.egress = egress

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	// etcd and the API server start together: the API server retries etcd.
	if err := c.run(logDir, bins, "etcd",
		"--name", "khook", "--data-dir", filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "khook="+peerURL,
		"--unsafe-no-fsync", // test data: durability is not wanted, speed is
	); err != nil {
		return err
	}
	if err := c.run(logDir, bins, "kube-apiserver", append(auditFlags,
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(apiPort),
		"--cert-dir", filepath.Join(c.Dir, "pki", "apiserver"),
		"--tls-cert-file", certs.servingCert, "--tls-private-key-file", certs.servingKey,
		"--client-ca-file", certs.caCert,
		"--token-auth-file", tokenFile,
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", certs.saPub, "--service-account-signing-key-file", certs.saKey,
		"--service-cluster-ip-range", "10.96.0.0/16",
		// The API server reaches kwok's kubelet endpoint (pod logs) on the
		// node's InternalIP, which kwok reports as 127.0.0.1.
		"--kubelet-preferred-address-types", "InternalIP",
		"--kubelet-certificate-authority", certs.caCert,
		"--kubelet-client-certificate", certs.servingCert, "--kubelet-client-key", certs.servingKey,
		// Endpoints may not hold a loopback address; nothing needs the
		// kubernetes service's endpoints here.
		"--endpoint-reconciler-type", "none",
		// Webhooks, aggregated APIs and kubelet connections go through the
		// in-process proxy, which dials loopback only (egress.go).
		"--egress-selector-config-file", egressConfig,
		"--allow-privileged",
		"--profiling=false",
	)...); err != nil {
		return err
	}
	ctx, cancel := c.failFast(ctx)
	defer cancel(nil)
	if err := c.waitAPIReady(ctx); err != nil {
		return err
	}
	apiReady := time.Since(start)

	kubeconfigFlags := []string{"--kubeconfig", c.Kubeconfig, "--authentication-kubeconfig", c.Kubeconfig, "--authorization-kubeconfig", c.Kubeconfig}
	if err := c.run(logDir, bins, "kube-controller-manager", append(kubeconfigFlags,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(kcmPort),
		"--leader-elect=false",
		// nodeipam would want pod CIDRs; the node lifecycle controller must
		// run: it lifts the node's not-ready taint.
		"--controllers", "*,-nodeipam",
		"--service-account-private-key-file", certs.saKey,
		"--root-ca-file", certs.caCert,
		"--cluster-signing-cert-file", certs.caCert, "--cluster-signing-key-file", certs.caKey,
		"--node-monitor-period", "1s",
	)...); err != nil {
		return err
	}
	if err := c.run(logDir, bins, "kube-scheduler", append(kubeconfigFlags,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(schedPort),
		"--leader-elect=false",
	)...); err != nil {
		return err
	}
	kwokAddr := "127.0.0.1:" + strconv.Itoa(kwokPort)
	if err := c.run(logDir, bins, "kwok",
		"--kubeconfig", c.Kubeconfig,
		"--config", kwokConfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake",
		// Without a lease the node lifecycle controller marks the node, and
		// every pod on it, not ready after about a minute.
		"--node-lease-duration-seconds", "40",
		"--cidr", "10.0.0.1/24",
		"--node-ip", "127.0.0.1",
		"--node-port", strconv.Itoa(kwokPort),
		"--server-address", kwokAddr,
		"--tls-cert-file", certs.servingCert, "--tls-private-key-file", certs.servingKey,
	); err != nil {
		return err
	}
	if err := c.createNodes(ctx); err != nil {
		return err
	}
	if withStorage {
		if err := c.startStorage(ctx); err != nil {
			return err
		}
	}
	if err := c.waitNodesReady(ctx); err != nil {
		return err
	}
	nodeReady := time.Since(start)
	if err := c.waitDefaultServiceAccount(ctx); err != nil {
		return err
	}
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	fmt.Fprintf(c.progress, "khook test cluster: ready in %s (API %s, %d nodes %s; %s)\n", r(time.Since(start)), r(apiReady), c.nodes, r(nodeReady), c.Dir)
	return nil
}

// run starts one component from the binary directory.
func (c *Cluster) run(logDir, bins, name string, args ...string) error {
	p, err := startProcess(logDir, name, filepath.Join(bins, name), args...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

// failFast returns a context that is cancelled, with a cause naming the
// component and its last log lines, as soon as any component exits, so a
// crash during start-up is reported at once instead of as a time-out.
func (c *Cluster) failFast(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	for _, p := range c.procs {
		go c.watchExit(ctx, cancel, p)
	}
	return ctx, cancel
}

func (c *Cluster) watchExit(ctx context.Context, cancel context.CancelCauseFunc, p *process) {
	select {
	case <-ctx.Done():
	case <-p.done:
		cancel(&exitError{fmt.Sprintf("khook test cluster: %s exited during start-up (%v); last log lines:\n%s", p.name, p.err, logTail(p.logPath, 15))})
	}
}

// Stop stops every process the cluster started (SIGTERM, then SIGKILL after
// a grace period) and removes its temporary directory. It is safe to call
// more than once; for a connected cluster it does nothing.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		c.stopping.Store(true)
		// Untracked only when done: the signal handler waits on this Stop
		// (through stopOnce) rather than exiting under it.
		defer untrack(c)
		if c.storage != nil {
			c.storage.stop()
		}
		// Clients of the API server first, together; then the API server; etcd last.
		var wg sync.WaitGroup
		for i := len(c.procs) - 1; i >= 0; i-- {
			p := c.procs[i]
			if p.name == "kube-apiserver" || p.name == "etcd" {
				continue
			}
			wg.Add(1)
			go func() { defer wg.Done(); p.stop(5 * time.Second) }()
		}
		wg.Wait()
		for _, name := range []string{"kube-apiserver", "etcd"} {
			for _, p := range c.procs {
				if p.name == name {
					p.stop(5 * time.Second)
				}
			}
		}
		if c.egress != nil {
			c.egress.stop()
		}
		if c.ownDir {
			_ = os.RemoveAll(c.Dir)
		}
	})
}

// writeKubeconfig writes <dir>/kubeconfig for a new admin token and sets
// Kubeconfig, RESTConfig and Client. It returns the token.
func (c *Cluster) writeKubeconfig(certs *pki, apiPort int) (string, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := hex.EncodeToString(raw)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["khook-test"] = &clientcmdapi.Cluster{
		Server:                   "https://127.0.0.1:" + strconv.Itoa(apiPort),
		CertificateAuthorityData: certs.caPEM,
	}
	cfg.AuthInfos["khook-admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["khook-test"] = &clientcmdapi.Context{Cluster: "khook-test", AuthInfo: "khook-admin", Namespace: "default"}
	cfg.CurrentContext = "khook-test"
	path := filepath.Join(c.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("khook test cluster: cannot write the kubeconfig: %w", err)
	}
	return token, c.useKubeconfig(path)
}

func (c *Cluster) useKubeconfig(path string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return fmt.Errorf("khook test cluster: cannot load kubeconfig %s: %w", path, err)
	}
	// Tests create objects in bursts; client-side throttling only slows them.
	rc.QPS, rc.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("khook test cluster: cannot build a client from %s: %w", path, err)
	}
	c.Kubeconfig, c.RESTConfig, c.Client = path, rc, cs
	return nil
}

// freePorts reserves n distinct free loopback ports. They are released just
// before the components bind them; the window for a collision is tiny.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("khook test cluster: cannot find a free loopback port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
