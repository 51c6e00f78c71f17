package fleet

import (
	"path/filepath"

	"github.com/khook/khook/spec"
)

// Touched keeps the clusters a change touches. changed are the changed
// files' absolute paths. A cluster's own overlays and var files touch only
// the clusters that use them; every other changed file (the fleet file,
// the spec, a chart, a manifest, anything the spec might read) touches
// every cluster — khook does not guess which files a spec reads, so a
// change never skips a cluster it could affect.
func Touched(f *spec.Fleet, clusters []*spec.FleetCluster, changed []string) []*spec.FleetCluster {
	abs := func(p string) string {
		if a, err := filepath.Abs(f.Resolve(p)); err == nil {
			return a
		}
		return f.Resolve(p)
	}
	users := map[string]map[string]bool{} // cluster-specific file -> clusters using it
	shared := map[string]bool{}
	for _, p := range f.Files {
		shared[abs(p)] = true
	}
	for _, c := range f.Clusters {
		for _, p := range append(append([]string(nil), c.Files...), c.VarFiles...) {
			a := abs(p)
			if users[a] == nil {
				users[a] = map[string]bool{}
			}
			users[a][c.Name] = true
		}
	}
	var out []*spec.FleetCluster
	for _, c := range clusters {
		for _, ch := range changed {
			u, specific := users[ch]
			if shared[ch] || !specific || u[c.Name] {
				out = append(out, c)
				break
			}
		}
	}
	return out
}
