package helmstep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"helm.sh/helm/v4/pkg/action"
	helmkube "helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/khook/khook/runner/kube"
)

// FieldManager is the server-side apply field manager Helm's kube client uses
// in khook. It is "helm", like the helm CLI, so that khook and helm can take
// turns on a release without server-side apply conflicts.
const FieldManager = "helm"

// restGetter is Helm's RESTClientGetter over khook's clients: no kubeconfig is
// re-read and no discovery cache is written under HOME.
type restGetter struct {
	config    *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface
}

func newRESTGetter(c *kube.Clients, namespace string, writes *atomic.Int64, rejected *rejectWatch, warnings *kube.Warnings) (*restGetter, error) {
	if c == nil || c.Config == nil {
		return nil, fmt.Errorf("helm step: no Kubernetes client configuration (internal error: clients not built)")
	}
	cfg := rest.CopyConfig(c.Config)
	// API warnings go to the step (kube.CollectWarnings), never to stderr:
	// Helm's kube client sends most requests without the step's context.
	kube.CollectWarnings(cfg, warnings)
	if writes != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &writeCounter{next: rt, writes: writes} })
	}
	if rejected != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return &rejectWatch{next: rt, seen: rejected.seen, once: rejected.once, lost: rejected.lost}
		})
	}
	disc := c.Discovery
	if disc == nil {
		d, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("helm step: cannot build a discovery client: %w", err)
		}
		disc = memory.NewMemCacheClient(d)
	}
	return &restGetter{config: cfg, namespace: namespace, discovery: disc}, nil
}

func (g *restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g *restGetter) ToRESTMapper() (meta.RESTMapper, error) {
	m := restmapper.NewDeferredDiscoveryRESTMapper(g.discovery)
	return restmapper.NewShortcutExpander(m, g.discovery, func(string) {}), nil
}

func (g *restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig { return namespaceOnly{g} }

// namespaceOnly is the kubeconfig loader kubectl's factory asks for the
// default namespace; khook already holds the loaded configuration.
type namespaceOnly struct{ g *restGetter }

func (n namespaceOnly) RawConfig() (clientcmdapi.Config, error) {
	return *clientcmdapi.NewConfig(), nil
}
func (n namespaceOnly) ClientConfig() (*rest.Config, error) { return n.g.ToRESTConfig() }
func (n namespaceOnly) Namespace() (string, bool, error)    { return n.g.namespace, true, nil }
func (n namespaceOnly) ConfigAccess() clientcmd.ConfigAccess {
	return clientcmd.NewDefaultClientConfigLoadingRules()
}

// writeCounter counts the requests that change cluster state: every verb but
// GET/HEAD/OPTIONS, dry-run requests excluded.
type writeCounter struct {
	next   http.RoundTripper
	writes *atomic.Int64
}

func (w *writeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if IsWrite(req) {
		w.writes.Add(1)
	}
	return w.next.RoundTrip(req)
}

// IsWrite reports whether a Kubernetes API request changes cluster state: a
// non-read verb that is not a dry run.
func IsWrite(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return !strings.Contains(req.URL.RawQuery, "dryRun=")
}

// rejectWatch closes seen at the first response that rejects the
// credentials (401). Helm's status watcher retries a rejected token quietly
// until its timeout; the session ends the operation instead (see guard).
// It also remembers the first lost connection of the session: a watcher
// that re-lists after an API server restart can still give up with its
// objects' status Unknown, an error that no longer says why.
type rejectWatch struct {
	next http.RoundTripper
	seen chan struct{}
	once *sync.Once
	lost *atomic.Pointer[string]
}

func newRejectWatch() *rejectWatch {
	return &rejectWatch{seen: make(chan struct{}), once: &sync.Once{}, lost: &atomic.Pointer[string]{}}
}

func (w *rejectWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		w.once.Do(func() { close(w.seen) })
	}
	if err != nil && lostConnection(err) {
		why := lostReason(err)
		w.lost.CompareAndSwap(nil, &why)
	}
	return resp, err
}

// lostDuring is how the session lost its connection to the API server
// ("" when it never did).
func (w *rejectWatch) lostDuring() string {
	if p := w.lost.Load(); p != nil {
		return *p
	}
	return ""
}

// errCredentialsRejected ends a Helm operation whose requests the API
// server answered 401; the step's error then gets the 401 sentence
// (explainCredentials).
var errCredentialsRejected = errors.New("Helm stopped at the first request the API server refused for its credentials")

// session is one Helm action configuration bound to a namespace, counting
// the writes its actions send.
type session struct {
	cfg      *action.Configuration
	getter   *restGetter
	writes   *atomic.Int64
	rejected *rejectWatch
	diag     *waitDiagnosis // nil when the client is not Helm's own
	// warnings are the API server's warnings to the session's requests;
	// the step forwards them to its collector (kube.Warnings.ForwardTo).
	warnings *kube.Warnings
}

// guard returns ctx ended as soon as any request of the session is
// answered 401, so that revoked credentials fail the step at once instead
// of at its timeout. stop releases the watch.
func (s *session) guard(ctx context.Context) (context.Context, func()) {
	gctx, cancel := context.WithCancelCause(ctx)
	stopped := make(chan struct{})
	go func() {
		select {
		case <-s.rejected.seen:
			cancel(errCredentialsRejected)
		case <-stopped:
		case <-gctx.Done():
		}
	}()
	return gctx, func() { close(stopped); cancel(nil) }
}

// rejectedErr is err, or errCredentialsRejected when the guard ended the
// operation (Helm reports only "context canceled").
func rejectedErr(gctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(gctx), errCredentialsRejected) {
		return errCredentialsRejected
	}
	return err
}

func (e *Executor) newSession(namespace string) (*session, error) {
	writes := &atomic.Int64{}
	rejected := newRejectWatch()
	warnings := &kube.Warnings{}
	getter, err := newRESTGetter(e.clients, namespace, writes, rejected, warnings)
	if err != nil {
		return nil, err
	}
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(e.opts.logHandler()))
	if err := cfg.Init(getter, namespace, "secret"); err != nil {
		return nil, fmt.Errorf("helm step: cannot initialise Helm for namespace %s: %w", namespace, err)
	}
	sess := &session{cfg: cfg, getter: getter, writes: writes, rejected: rejected, warnings: warnings}
	if kc, ok := cfg.KubeClient.(*helmkube.Client); ok {
		// The release namespace, not the kubeconfig's, for namespace-less objects.
		kc.Namespace = namespace
		cfg.KubeClient, sess.diag = diagnose(kc, e.clients)
	}
	return sess, nil
}

func discardLogger() slog.Handler { return slog.DiscardHandler }
