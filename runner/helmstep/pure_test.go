package helmstep

import (
	"net/http"
	"net/url"
	"testing"
)

func TestSplitOCIRef(t *testing.T) {
	for ref, want := range map[string][3]string{
		"127.0.0.1:5000/charts/demo":                 {"127.0.0.1:5000/charts/demo", "", ""},
		"127.0.0.1:5000/charts/demo:1.2.3":           {"127.0.0.1:5000/charts/demo", "1.2.3", ""},
		"ghcr.io/org/demo@sha256:abc":                {"ghcr.io/org/demo", "", "sha256:abc"},
		"ghcr.io/org/demo:1.0.0@sha256:abc":          {"ghcr.io/org/demo", "1.0.0", "sha256:abc"},
		"registry.example:443/a/b/c/demo:0.1.0-rc.1": {"registry.example:443/a/b/c/demo", "0.1.0-rc.1", ""},
	} {
		b, tag, d := splitOCIRef(ref)
		if [3]string{b, tag, d} != want {
			t.Errorf("splitOCIRef(%q) = %q %q %q, want %q", ref, b, tag, d, want)
		}
	}
}

func TestSameValuesIgnoresNumberTypes(t *testing.T) {
	stored := map[string]any{"replicas": float64(2), "a": map[string]any{"b": true}}
	next, err := jsonForm(map[string]any{"replicas": 2, "a": map[string]any{"b": true}})
	if err != nil {
		t.Fatal(err)
	}
	if !SameValues(stored, next) {
		t.Error("2 and 2.0 compared different")
	}
	if !SameValues(nil, map[string]any{}) {
		t.Error("nil and empty values compared different")
	}
	if SameValues(stored, map[string]any{"replicas": float64(3)}) {
		t.Error("different values compared equal")
	}
}

func TestIsWrite(t *testing.T) {
	for _, tc := range []struct {
		method, query string
		want          bool
	}{
		{"GET", "", false}, {"POST", "", true}, {"PATCH", "fieldManager=helm", true},
		{"PATCH", "dryRun=All&fieldManager=helm", false}, {"DELETE", "", true},
	} {
		req := &http.Request{Method: tc.method, URL: &url.URL{RawQuery: tc.query}}
		if got := IsWrite(req); got != tc.want {
			t.Errorf("IsWrite(%s ?%s) = %v, want %v", tc.method, tc.query, got, tc.want)
		}
	}
}

func TestSplitCredentialsRegistersPassword(t *testing.T) {
	e := New(nil, ".", nil)
	clean, user, pass, err := e.splitCredentials("https://bob:p%40ss@charts.example/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if clean != "https://charts.example/x" || user != "bob" || pass != "p@ss" {
		t.Errorf("got %q %q %q", clean, user, pass)
	}
	if got := e.redactor.String("token p@ss here"); got != "token *** here" {
		t.Errorf("password not registered with the redactor: %q", got)
	}
}
