package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// Fault injection for tests of what a client does when the API server goes
// away: StopAPIServer ends kube-apiserver (its port then refuses
// connections), StartAPIServer runs it again with the same binary, flags,
// port, certificates and etcd, so every client's configuration stays valid.
// Use them only on a cluster private to the test package: every test sharing
// it sees the outage.

// StopAPIServer stops kube-apiserver (SIGTERM, SIGKILL after 5s) and returns
// once it has exited.
func (c *Cluster) StopAPIServer() error {
	p, err := c.apiServer()
	if err != nil {
		return err
	}
	p.expectExit.Store(true)
	p.stop(5 * time.Second)
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer and
// returns once it answers /readyz.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	i, old, err := c.apiServerIndex()
	if err != nil {
		return err
	}
	if !old.exited() {
		return fmt.Errorf("khook test cluster: kube-apiserver is running; stop it first")
	}
	p, err := startProcess(filepath.Dir(old.logPath), old.name, old.cmd.Path, old.cmd.Args[1:]...)
	if err != nil {
		return err
	}
	c.procs[i] = p
	go c.reportCrash(p)
	return c.waitAPIReady(ctx)
}

// RestartAPIServer stops kube-apiserver and starts it again; it returns
// how long the API was unreachable.
func (c *Cluster) RestartAPIServer(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	if err := c.StopAPIServer(); err != nil {
		return 0, err
	}
	if err := c.StartAPIServer(ctx); err != nil {
		return time.Since(start), err
	}
	return time.Since(start), nil
}

func (c *Cluster) apiServer() (*process, error) {
	_, p, err := c.apiServerIndex()
	return p, err
}

func (c *Cluster) apiServerIndex() (int, *process, error) {
	for i, p := range c.procs {
		if p.name == "kube-apiserver" {
			return i, p, nil
		}
	}
	return 0, nil, fmt.Errorf("khook test cluster: no kube-apiserver of its own (a connected cluster cannot be restarted)")
}
