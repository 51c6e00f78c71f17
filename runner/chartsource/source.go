// Package chartsource brings a helm step's chart and values: charts from
// HTTP repositories (index.yaml read directly), OCI registries, git
// repositories (git.go) and local paths, their dependencies built, credentials kept in memory, the step's
// values loaded and merged, and a chart rendered offline (khook plan
// --offline). The helm executor (runner/helmstep) and the offline plan
// (runner/plan) both use it, so a chart is sourced one way.
//
// Nothing is written under HOME: the registry credentials file and index
// downloads live in a per-fetcher temp dir (Close removes it).
//
// May import: runner/kube, model, spec, redact, sops and the Helm SDK; no
// executor, plan, action or state package, no renderer.
package chartsource

import (
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/kube"
)

// Fetcher fetches charts and loads values. It is safe for concurrent use
// by steps of one run.
type Fetcher struct {
	clients  *kube.Clients // values from Secrets and ConfigMaps
	baseDir  string
	redactor *redact.Redactor
	opts     Options

	tmpOnce sync.Once
	tmpDir  string
	tmpErr  error

	// verified caches verify's answers by chart digest within the run
	// (verify.go); keyrings the parsed keyrings by path.
	verified, keyrings sync.Map
}

// Options are a Fetcher's network settings.
type Options struct {
	// Transport is the HTTP transport for chart repositories, values URLs
	// and OCI registries (tests use it to trust their own CA).
	Transport *http.Transport
	// PlainHTTP forces plain HTTP (true) or HTTPS (false) for OCI
	// registries. When nil, registries on loopback addresses use plain HTTP.
	PlainHTTP *bool
}

// New returns a fetcher. Relative chart and values paths resolve against
// baseDir; every credential met is registered with r (nil: a redactor of
// its own).
func New(clients *kube.Clients, baseDir string, r *redact.Redactor, opts Options) *Fetcher {
	if r == nil {
		r = redact.New()
	}
	return &Fetcher{clients: clients, baseDir: baseDir, redactor: r, opts: opts}
}

// Close removes the fetcher's temp dir.
func (e *Fetcher) Close() error {
	if e.tmpDir != "" {
		return os.RemoveAll(e.tmpDir)
	}
	return nil
}

// TempDir is the temp dir made ("" before the first download needed one).
func (e *Fetcher) TempDir() string { return e.tmpDir }

func (e *Fetcher) tempDir() (string, error) {
	e.tmpOnce.Do(func() {
		e.tmpDir, e.tmpErr = os.MkdirTemp("", "khook-helm-")
		if e.tmpErr != nil {
			e.tmpErr = fmt.Errorf("cannot create a temporary directory for Helm: %w", e.tmpErr)
		}
	})
	return e.tmpDir, e.tmpErr
}
