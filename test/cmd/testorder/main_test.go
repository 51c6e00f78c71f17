package main

import (
	"slices"
	"testing"
)

// A package whose test binary depends on a background-built tool waits;
// one that needs only the helm or helmfile CLI (test/helmfilecorpus, which
// builds helmfile only for a stale record) does not; the longest of each
// group start first, in the order given.
func TestOrder(t *testing.T) {
	list := []byte(`m/a
m/b
m/c
m/d
m/a.test m/a testing
m/b.test m/b github.com/khook/khook/test/clusterbin
m/c [m/c.test] 
m/c.test m/c github.com/khook/khook/test/clusterbin
m/d.test m/d github.com/khook/khook/test/helmcli github.com/khook/khook/test/helmfilecli
`)
	free, waits := order(list)
	if want := []string{"m/a", "m/d"}; !slices.Equal(free, want) {
		t.Errorf("free = %v, want %v", free, want)
	}
	if want := []string{"m/b", "m/c"}; !slices.Equal(waits, want) {
		t.Errorf("waits = %v, want %v", waits, want)
	}
	if got, want := longestFirst(waits, []string{"m/c", "m/d"}), []string{"m/c", "m/b"}; !slices.Equal(got, want) {
		t.Errorf("longestFirst = %v, want %v", got, want)
	}
}
