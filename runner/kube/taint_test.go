package kube

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/khook/khook/redact"
)

// The API server's answers are canned here: what is tested is how the tap
// reads them (the real control plane's are in runner/steps).
func canned(body string) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": []string{"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	})
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func tapped(t *testing.T, body, url string) *redact.Redactor {
	t.Helper()
	red := redact.New()
	tap := &secretTap{red: red}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, application/json")
	resp, err := tap.wrap(canned(body)).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if string(got) != body {
		t.Fatalf("the tap changed the response: %q", got)
	}
	return red
}

func TestTapRegistersListsAndSkipsReleases(t *testing.T) {
	body := `{"kind":"SecretList","apiVersion":"v1","items":[
{"metadata":{"name":"db"},"type":"Opaque","data":{"password":"` + b64("list-pa55word") + `","on":"` + b64("true") + `"}},
{"metadata":{"name":"sh.helm.release.v1.app.v1"},"type":"helm.sh/release.v1","data":{"release":"` + b64("release-record") + `"}}]}` + "\n"
	red := tapped(t, body, "https://k/api/v1/namespaces/a/secrets")
	if got := red.String("list-pa55word true release-record"); got != "*** true release-record" {
		t.Errorf("got %q", got)
	}
}

func TestTapRegistersEachWatchEvent(t *testing.T) {
	body := `{"type":"ADDED","object":{"kind":"Secret","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"` + b64("watched-one") + `"}}}` + "\n" +
		`{"type":"MODIFIED","object":{"kind":"Secret","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"` + b64("watched-two") + `"}}}` + "\n"
	red := tapped(t, body, "https://k/api/v1/namespaces/a/secrets?watch=true")
	if got := red.String("watched-one watched-two"); got != "*** ***" {
		t.Errorf("got %q", got)
	}
}

func TestTapLeavesOtherResourcesAlone(t *testing.T) {
	body := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"secrets"},"data":{"k":"not-a-secret"}}`
	for _, u := range []string{"https://k/api/v1/namespaces/a/configmaps/secrets", "https://k/apis/x.io/v1/namespaces/a/secrets/b"} {
		if got := tapped(t, body, u).String("not-a-secret"); got != "not-a-secret" {
			t.Errorf("%s: got %q", u, got)
		}
	}
}

func TestDenySecretReads(t *testing.T) {
	asked := 0
	denied := 0
	cfg := DenySecretReads(&rest.Config{}, func() { denied++ })
	rt := cfg.WrapTransport(roundTripFunc(func(req *http.Request) (*http.Response, error) {
		asked++
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
	}))
	for url, want := range map[string]int{
		"https://k/api/v1/namespaces/a/secrets/db":                                    404,
		"https://k/api/v1/namespaces/a/secrets":                                       200,
		"https://k/api/v1/namespaces/a/secrets/sh.helm.release.v1.app.v3":             200,
		"https://k/api/v1/namespaces/a/secrets?labelSelector=name%3Dapp,owner%3Dhelm": 200,
	} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != want {
			t.Errorf("%s: %v %v, want %d", url, resp.StatusCode, err, want)
		}
	}
	if asked != 2 || denied != 2 {
		t.Errorf("asked the server %d times and denied %d; want Helm's 2 storage reads asked and the 2 lookups denied", asked, denied)
	}
}
