package fleet

import (
	"path/filepath"

	"github.com/khook/khook/spec"
)

// Touched keeps the clusters a change touches. changed are the changed
// files' absolute paths. filesOf gives the files a cluster's spec reads
// (khook files' list, runner/command.Files) when its spec loads here: the
// cluster is touched when one of them, or the fleet file, changed.
// Otherwise (ok false: a secret it requires is not set in this job, say)
// a cluster's own overlays, var files and policy files touch only the
// clusters that use them, and every other changed file touches every
// cluster, so a change never skips a cluster it could affect.
func Touched(f *spec.Fleet, clusters []*spec.FleetCluster, changed []string, filesOf func(*spec.FleetCluster) (files []string, ok bool)) []*spec.FleetCluster {
	abs := func(p string) string {
		if a, err := filepath.Abs(f.Resolve(p)); err == nil {
			return a
		}
		return f.Resolve(p)
	}
	users := map[string]map[string]bool{} // cluster-specific file -> clusters using it
	shared := map[string]bool{}
	for _, p := range append(append([]string(nil), f.Files...), f.Policies...) {
		shared[abs(p)] = true
	}
	for _, c := range f.Clusters {
		for _, p := range append(append(append([]string(nil), c.Files...), c.VarFiles...), c.Policies...) {
			a := abs(p)
			if users[a] == nil {
				users[a] = map[string]bool{}
			}
			users[a][c.Name] = true
		}
	}
	fleetFile, _ := filepath.Abs(f.Path)
	var out []*spec.FleetCluster
	for _, c := range clusters {
		if files, ok := filesOf(c); ok {
			reads := map[string]bool{fleetFile: true}
			for _, p := range files {
				reads[p] = true
			}
			for _, ch := range changed {
				if reads[ch] {
					out = append(out, c)
					break
				}
			}
			continue
		}
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
