package fleet

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/khook/khook/spec"
)

// Policy files decide which clusters a change touches like spec files: a
// cluster's own policy file touches it alone, the fleet's touches every
// cluster, both when the clusters' specs load here (their files list the
// policies) and when they do not (the fleet file says who uses what).
func TestTouchedByPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	f := &spec.Fleet{
		Path:     filepath.Join(dir, "fleet.yaml"),
		Files:    []string{"khook.yaml"},
		Policies: []string{"policies/all.yaml"},
		Clusters: []spec.FleetCluster{
			{Name: "eu", Policies: []string{"policies/eu.yaml"}},
			{Name: "us"},
		},
	}
	clusters := []*spec.FleetCluster{&f.Clusters[0], &f.Clusters[1]}
	at := func(p string) string { return filepath.Join(dir, p) }
	// As khook files lists them for each cluster's spec loaded with its
	// policy files (runner/command.Files).
	loaded := func(c *spec.FleetCluster) ([]string, bool) {
		return append([]string{at("khook.yaml")}, f.PolicyPaths(c)...), true
	}
	notLoaded := func(*spec.FleetCluster) ([]string, bool) { return nil, false }
	names := func(cs []*spec.FleetCluster) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		changed string
		want    []string
	}{
		{"a cluster's own policy", "policies/eu.yaml", []string{"eu"}},
		{"the fleet's policy", "policies/all.yaml", []string{"eu", "us"}},
	} {
		for how, filesOf := range map[string]func(*spec.FleetCluster) ([]string, bool){"specs load": loaded, "specs do not load": notLoaded} {
			got := names(Touched(f, clusters, []string{at(tc.changed)}, filesOf))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s, %s: touched %v, want %v", tc.name, how, got, tc.want)
			}
		}
	}
	// A policy file no cluster uses touches none when the specs load.
	if got := names(Touched(f, clusters, []string{at("policies/other.yaml")}, loaded)); len(got) != 0 {
		t.Errorf("an unused policy file touched %v", got)
	}
}
