package kube

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// DenySecretReads returns a copy of cfg whose reads of Secrets are answered
// without asking the API server, as if none existed (a GET is NotFound, a
// LIST is empty), and calls denied for each: Helm's lookup of a Secret
// then returns nothing, as in a client-side render (lookup-secrets: deny).
// Helm's own release storage still reads: GETs of its release records
// (sh.helm.release.v1.*) and LISTs selecting owner=helm.
func DenySecretReads(cfg *rest.Config, denied func()) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodGet || !isSecretsPath(req.URL.Path) || helmStorageRead(req.URL) {
				return rt.RoundTrip(req)
			}
			if denied != nil {
				denied()
			}
			name := secretName(req.URL.Path)
			if name == "" {
				return synthesized(req, http.StatusOK, `{"kind":"SecretList","apiVersion":"v1","metadata":{},"items":[]}`), nil
			}
			return synthesized(req, http.StatusNotFound, fmt.Sprintf(
				`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"secrets %q not found (lookup-secrets: deny)","reason":"NotFound","details":{"name":%q,"kind":"secrets"},"code":404}`, name, name)), nil
		})
	})
	return cfg
}

func helmStorageRead(u *url.URL) bool {
	if strings.HasPrefix(secretName(u.Path), "sh.helm.release.v1.") {
		return true
	}
	for _, term := range strings.Split(u.Query().Get("labelSelector"), ",") {
		if strings.TrimSpace(term) == "owner=helm" {
			return secretName(u.Path) == ""
		}
	}
	return false
}

// secretName is the NAME of .../secrets/NAME, "" for a collection.
func secretName(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) >= 2 && parts[len(parts)-2] == "secrets" {
		return parts[len(parts)-1]
	}
	return ""
}

func synthesized(req *http.Request, code int, body string) *http.Response {
	return &http.Response{
		StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
