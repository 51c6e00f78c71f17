// Package kube holds what every Kubernetes-facing executor shares:
//
//   - Clients / NewClients: typed, dynamic and memory-cached discovery clients
//     plus a deferred RESTMapper with kubectl short names, built once per run
//     from --kubeconfig/--context (KUBECONFIG, then in-cluster).
//   - Explain / IsUnreachable: turn transport and 401 errors into sentences a
//     user can act on (URL credentials stripped); IsUnreachable feeds the CI
//     failure-reason cluster-unreachable.
//   - Clients.ResolveObject / Clients.MappingFor: kubectl resource arguments
//     ("deploy/x", "deployments.apps", "Deployment/x", "pods") and kinds to
//     REST mappings; kinds of CRDs the run applied or saw Established map
//     from the CRD itself (crdMapper), others through discovery, reset on a
//     miss; a custom resource written before its new CRD is served waits
//     for Established (a watch), then is sent.
//   - The secret tap (taint.go): every Secret read through Clients.Config,
//     Helm's sessions and lookups included, has its values registered with
//     the run's redactor (MaskSecretsWith) before the caller sees it;
//     DenySecretReads answers a template's reads of Secrets as absent
//     (lookup-secrets: deny).
//   - The readiness predicates (Ready, NewCondition(spec.WaitFor) and
//     Condition.Met/Evaluate) are runner/kube/readiness's, pure; the waits
//     (watch-driven, never polling), their progress and the diagnosis of a
//     failed wait are runner/kube/wait's, which imports this package and
//     hands its deletion wait in (SetGone) for Send and Replace. Its waits
//     and this package's CRD wait end with WaitError: a *TimeoutError says
//     what was unmet.
//   - PlanApply + Send: kubectl apply split into "compute the request"
//     (create / three-way patch / unchanged, or a server-side apply patch)
//     and "send it" (optionally DryRun=All), so plan and plan --diff predict
//     with exactly the request apply sends. EnsureNamespace for
//     createNamespace; Resource for a mapping's dynamic client.
//
// Loading manifests is runner/kube/manifest's, which needs no client.
//
// May import: of khook only its own rooms below it (runner/kube/manifest,
// runner/kube/objdiff; never runner/kube/wait, which is above it), model,
// spec, redact and sops (no other runner package, no renderer), and
// client-go.
package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/khook/khook/redact"
)

// Clients is the set of clients one run uses, built once from the kubeconfig.
type Clients struct {
	// Kubeconfig and Context are what the user passed (Kubeconfig may be
	// empty: KUBECONFIG, then in-cluster). Helm builds its own getter from them.
	Kubeconfig string
	Context    string
	Namespace  string // the kubeconfig context's namespace, else "default"

	Config    *rest.Config
	Typed     kubernetes.Interface
	Dynamic   dynamic.Interface
	Discovery discovery.CachedDiscoveryInterface
	// Mapper resolves kinds and resources; Reset it after a discovery miss
	// (a CRD an earlier step registered).
	Mapper meta.ResettableRESTMapper

	// taint registers the Secrets read through Config (MaskSecretsWith).
	taint *secretTap
}

// Client-side rate limits: high enough not to bind. The API server protects
// itself with API Priority and Fairness (GA since 1.29) and answers 429
// when it must, which client-go retries; a client-side limit only queued
// khook behind itself (#24: at 50/100 a fresh apply of the 200-step
// platform bench took 32.6 s, 15.4 s without the wait).
const (
	defaultQPS   = 500
	defaultBurst = 1000
)

// UserAgent is the User-Agent of every request khook sends (Helm's included:
// its clients copy Config), so an API server's audit log and metrics name
// khook whatever the binary is called. The CLI adds its version.
var UserAgent = "khook (" + runtime.GOOS + "/" + runtime.GOARCH + ")"

// UserAgentFor is khook's User-Agent for a build's version.
func UserAgentFor(version string) string {
	if version == "" {
		return UserAgent
	}
	return "khook/" + version + " (" + runtime.GOOS + "/" + runtime.GOARCH + ")"
}

// NewClients loads the kubeconfig (the explicit path, else KUBECONFIG and
// ~/.kube/config, else the in-cluster service account) and builds the clients.
// It does not contact the server; the first request does.
func NewClients(kubeconfig, context string) (*Clients, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, configError(rules, kubeconfig, context, err)
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	c, err := NewClientsForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c.Kubeconfig, c.Context, c.Namespace = kubeconfig, context, ns
	return c, nil
}

// configError says why no cluster configuration loaded. When nothing was
// found, it names where khook looked: client-go skips a KUBECONFIG file that
// does not exist, as kubectl does, and its own sentence then suggests
// KUBERNETES_MASTER, which says nothing of the path the user set.
func configError(rules *clientcmd.ClientConfigLoadingRules, kubeconfig, context string, err error) error {
	var with []string
	if kubeconfig != "" {
		with = append(with, "kubeconfig "+kubeconfig)
	}
	if context != "" {
		with = append(with, "context "+context)
	}
	what := ""
	if len(with) > 0 {
		what = " (" + strings.Join(with, ", ") + ")"
	}
	if kubeconfig == "" && clientcmd.IsEmptyConfig(err) {
		var looked []string
		for _, p := range rules.Precedence {
			state := "has no cluster"
			if _, serr := os.Stat(p); serr != nil {
				state = "does not exist"
			}
			looked = append(looked, p+" "+state)
		}
		where := "the default kubeconfig"
		if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
			where = "KUBECONFIG"
		}
		if len(looked) == 0 {
			looked = []string{"names no file"}
		}
		return fmt.Errorf("cannot load the cluster configuration%s: %s: %s, and khook is not running in a cluster; pass --kubeconfig, or set KUBECONFIG to a kubeconfig file",
			what, where, strings.Join(looked, ", "))
	}
	return fmt.Errorf("cannot load the cluster configuration%s: %s; pass --kubeconfig/--context or set KUBECONFIG", what, redact.StripURLCredentials(err.Error()))
}

// NewClientsForConfig builds the clients from a REST config (tests pass the
// harness's, possibly wrapped to count requests). Namespace is "default".
func NewClientsForConfig(cfg *rest.Config) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS = defaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = defaultBurst
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = UserAgent
	}
	CollectWarnings(cfg, nil)
	taint := tapConfig(cfg)
	typed, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot build a Kubernetes client for %s: %w", HostOf(cfg), err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot build a Kubernetes client for %s: %w", HostOf(cfg), err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot build a discovery client for %s: %w", HostOf(cfg), err)
	}
	cached := memory.NewMemCacheClient(disco)
	return &Clients{
		Namespace: "default",
		Config:    cfg,
		Typed:     typed,
		Dynamic:   dyn,
		Discovery: cached,
		Mapper:    NewMapper(cached),
		taint:     taint,
	}, nil
}

// NewMapper is a deferred discovery RESTMapper that also expands kubectl
// short names ("deploy", "po"), under the kinds of CRDs the run applied or
// saw Established (see crdMapper); Reset invalidates the discovery cache.
func NewMapper(cached discovery.CachedDiscoveryInterface) meta.ResettableRESTMapper {
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	mapper, ok := restmapper.NewShortcutExpander(deferred, cached, func(string) {}).(meta.ResettableRESTMapper)
	if !ok { // the expander has always been resettable; keep a working mapper if that changes
		return newCRDMapper(deferred)
	}
	return newCRDMapper(mapper)
}

// crds is the CRD layer of the mapper (nil for a mapper built otherwise).
func (c *Clients) crds() *crdMapper {
	m, _ := c.Mapper.(*crdMapper)
	return m
}

// LearnCRD makes the kind a CRD object (as the API server returned it)
// defines resolve without discovery. Send calls it for every CRD it applies.
func (c *Clients) LearnCRD(crd *unstructured.Unstructured) {
	if m := c.crds(); m != nil && crd != nil && IsCRD(crd) {
		m.learn(crd)
	}
}

// ForgetCRD drops what LearnCRD learned from a CRD that was deleted.
func (c *Clients) ForgetCRD(name string) {
	if m := c.crds(); m != nil {
		m.forget(name)
	}
}

// Ping checks that the API server answers and accepts the credentials.
func (c *Clients) Ping(ctx context.Context) error {
	_, err := c.Typed.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	return c.Explain(err)
}

// HostOf names the API server cfg points at, its URL credentials stripped.
func HostOf(cfg *rest.Config) string {
	if cfg == nil || cfg.Host == "" {
		return "the API server"
	}
	return redact.StripURLCredentials(cfg.Host)
}

// UnreachableError says the API server could not be reached or refused the
// credentials: nothing any step does can succeed.
type UnreachableError struct {
	Msg   string
	Cause error
}

func (e *UnreachableError) Error() string { return e.Msg }
func (e *UnreachableError) Unwrap() error { return e.Cause }

// IsUnreachable reports whether err (or an error it wraps) means the cluster
// could not be reached or rejected the credentials: the CI failure-reason
// cluster-unreachable.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	if errors.As(err, &u) {
		return true
	}
	return IsTransport(err) || apierrors.IsUnauthorized(err)
}

// Explain turns connection failures and rejected credentials into an
// *UnreachableError with a sentence naming the server; other errors are
// returned unchanged. nil stays nil.
func (c *Clients) Explain(err error) error {
	if err == nil {
		return nil
	}
	var u *UnreachableError
	if errors.As(err, &u) {
		return err
	}
	host := HostOf(c.Config)
	switch {
	case apierrors.IsUnauthorized(err):
		return &UnreachableError{Cause: err, Msg: fmt.Sprintf(
			"the API server at %s rejected the credentials (401 Unauthorized): the token may have expired; check --kubeconfig/--context", host)}
	case IsTransport(err):
		return &UnreachableError{Cause: err, Msg: fmt.Sprintf(
			"cannot reach the API server at %s: %s; check --kubeconfig/--context", host, TransportReason(err))}
	}
	return err
}

// ElsewhereError is a failure to reach a server other than the API server
// (a chart repository): whatever its text says, it is never the cluster
// unreachable. It hides its cause from errors.As on purpose.
type ElsewhereError struct{ Err error }

func (e *ElsewhereError) Error() string { return e.Err.Error() }

// IsTransport reports a failure to reach the API server (not its answer).
func IsTransport(err error) bool {
	var elsewhere *ElsewhereError
	if err == nil || errors.As(err, &elsewhere) {
		return false
	}
	// An answer of the API server is not a transport failure, even when
	// its message is one: a webhook it could not call ("failed calling
	// webhook ...: connection refused") is its refusal of the object.
	var answer apierrors.APIStatus
	if errors.As(err, &answer) {
		return false
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return true
	}
	var uErr *url.Error
	if errors.As(err, &uErr) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused")
}

// TransportReason is the innermost useful part of a transport error
// ("connection refused", "no such host", "x509: certificate signed by
// unknown authority").
func TransportReason(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "no such host " + dnsErr.Name
	}
	var uErr *url.Error
	if errors.As(err, &uErr) {
		err = uErr.Err
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		err = opErr.Err
	}
	return redact.StripURLCredentials(err.Error())
}
