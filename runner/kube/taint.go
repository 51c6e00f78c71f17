package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/redact"
)

// HelmReleaseType is the type of the Secrets Helm keeps its release
// records in: large, holding manifests whose secret parts are registered
// on their own, so not values to mask.
const HelmReleaseType corev1.SecretType = "helm.sh/release.v1"

// secretTap taints at the source: every Secret a response of the API server
// carries (GET, LIST, WATCH; khook's own reads, Helm's storage and the
// templates' lookup alike, as they share the clients' REST config) has its
// values registered with the run's redactor before the response reaches
// the code that asked, so before any of it can be printed or written.
type secretTap struct {
	mu   sync.RWMutex
	red  *redact.Redactor
	skip func(*corev1.Secret) bool
}

// MaskSecretsWith makes the Secrets this run reads from the cluster masked
// by r, except Helm release records and those skip names (khook's own state
// record). Every client built from c.Config, Helm's included, is covered.
func (c *Clients) MaskSecretsWith(r *redact.Redactor, skip func(*corev1.Secret) bool) {
	if c == nil || c.taint == nil || r == nil {
		return
	}
	c.taint.mu.Lock()
	defer c.taint.mu.Unlock()
	c.taint.red = r
	if skip != nil {
		c.taint.skip = skip
	}
}

func (t *secretTap) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet || !isSecretsPath(req.URL.Path) || req.Context().Value(unmasked{}) != nil {
			return rt.RoundTrip(req)
		}
		t.mu.RLock()
		red, skip := t.red, t.skip
		t.mu.RUnlock()
		if red == nil {
			return rt.RoundTrip(req)
		}
		// JSON, not protobuf, so the values can be read here; every
		// client of the run decodes JSON. Other JSON forms (a Table,
		// metadata only) carry no values and are left as asked.
		if strings.Contains(req.Header.Get("Accept"), "protobuf") {
			req = req.Clone(req.Context())
			req.Header.Set("Accept", "application/json")
		}
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		reg := registrar{red: red, skip: skip}
		if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
			resp.Body = &watchTap{r: bufio.NewReader(resp.Body), c: resp.Body, reg: reg}
			return resp, nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		reg.document(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	})
}

type unmasked struct{}

// UnmaskedSecretReads returns a copy of cfg whose reads of Secrets are not
// registered with the redactor (lookup-secrets: allow, for Helm's lookup
// in a trusted plan).
func UnmaskedSecretReads(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			return rt.RoundTrip(req.WithContext(context.WithValue(req.Context(), unmasked{}, true)))
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// isSecretsPath matches /api/v1/secrets, /api/v1/namespaces/NS/secrets and
// /api/v1/namespaces/NS/secrets/NAME (not subresources of other kinds).
func isSecretsPath(p string) bool {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) < 3 || parts[0] != "api" || parts[1] != "v1" {
		return false
	}
	rest := parts[2:]
	if rest[0] == "namespaces" && len(rest) >= 3 {
		rest = rest[2:]
	}
	return (len(rest) == 1 || len(rest) == 2) && rest[0] == "secrets"
}

type registrar struct {
	red  *redact.Redactor
	skip func(*corev1.Secret) bool
}

// document registers the values of a Secret or of a list of them.
func (g registrar) document(body []byte) {
	var doc struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return
	}
	if doc.Kind == "Secret" {
		g.secret(body)
		return
	}
	for _, it := range doc.Items {
		g.secret(it)
	}
}

func (g registrar) secret(raw []byte) {
	// The type first: a release record is large, its data not worth decoding.
	var head struct {
		Type corev1.SecretType `json:"type"`
	}
	if json.Unmarshal(raw, &head) != nil || head.Type == HelmReleaseType {
		return
	}
	var s corev1.Secret
	if json.Unmarshal(raw, &s) != nil || (g.skip != nil && g.skip(&s)) {
		return
	}
	for _, v := range s.Data {
		g.red.Found(string(v))
	}
	for _, v := range s.StringData {
		g.red.Found(v)
	}
}

// watchTap registers the Secret of each watch event before the event is
// read: the JSON stream holds one event a line.
type watchTap struct {
	r   *bufio.Reader
	c   io.Closer
	reg registrar
	buf []byte
}

func (w *watchTap) Read(p []byte) (int, error) {
	if len(w.buf) == 0 {
		line, err := w.r.ReadBytes('\n')
		if len(line) > 0 {
			var ev struct {
				Object json.RawMessage `json:"object"`
			}
			if json.Unmarshal(line, &ev) == nil && len(ev.Object) > 0 {
				w.reg.document(ev.Object)
			}
			w.buf = line
		}
		if len(w.buf) == 0 {
			return 0, err
		}
	}
	n := copy(p, w.buf)
	w.buf = w.buf[n:]
	return n, nil
}

func (w *watchTap) Close() error { return w.c.Close() }

// tapConfig installs the tap on cfg; every copy of cfg (rest.CopyConfig
// keeps the wrap) reports to the same tap.
func tapConfig(cfg *rest.Config) *secretTap {
	t := &secretTap{}
	cfg.Wrap(t.wrap)
	return t
}
