package helmstep

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/khook/khook/runner/chartsource"
)

func TestSameValuesIgnoresNumberTypes(t *testing.T) {
	stored := map[string]any{"replicas": float64(2), "a": map[string]any{"b": true}}
	next, err := chartsource.New(nil, ".", nil, chartsource.Options{}).Values().Inline(map[string]any{"replicas": 2, "a": map[string]any{"b": true}})
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
