package fleet

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// legPattern is how leg results files are named (model.LegFileName).
const legPattern = "khook-leg-*.json"

// ReadLegs reads leg results files: each path is a file, or a directory
// searched recursively for khook-leg-*.json (as download-artifact lays the
// legs' artifacts out, merged or one directory per artifact). A file that
// cannot be read or is not a leg's is a problem the report names; it never
// stops the others.
func ReadLegs(paths []string) ([]*model.Leg, []string) {
	var legs []*model.Leg
	var problems []string
	read := func(path string) {
		f, err := os.Open(path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("cannot read results file %s: %v", path, err))
			return
		}
		defer f.Close()
		l, err := model.ReadLeg(f)
		if err != nil {
			problems = append(problems, fmt.Sprintf("results file %s is unusable: %v", path, err))
			return
		}
		legs = append(legs, l)
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("cannot read results %s: %v", p, err))
			continue
		}
		if !fi.IsDir() {
			read(p)
			continue
		}
		var files []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if ok, _ := filepath.Match(legPattern, d.Name()); ok && !d.IsDir() {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			problems = append(problems, fmt.Sprintf("cannot search %s for results files: %v", p, err))
		}
		sort.Strings(files)
		for _, f := range files {
			read(f)
		}
	}
	return legs, problems
}

// Members are the report's rows: the selected clusters.
func Members(clusters []*spec.FleetCluster) []model.FleetMember {
	out := make([]model.FleetMember, len(clusters))
	for i, c := range clusters {
		out[i] = model.FleetMember{Name: c.Name, Wave: c.Wave}
	}
	return out
}

// Selection is what a fleet command works on: the fleet's clusters of a
// wave (0: every wave) matching a label selector.
func Selection(f *spec.Fleet, wave int, selector string) ([]*spec.FleetCluster, error) {
	sel, err := spec.ParseSelector(selector)
	if err != nil {
		return nil, err
	}
	cs := f.Select(wave, sel)
	if len(cs) == 0 {
		var what []string
		if wave > 0 {
			what = append(what, fmt.Sprintf("wave %d", wave))
		}
		if selector != "" {
			what = append(what, "selector "+selector)
		}
		return nil, fmt.Errorf("no cluster of fleet %s matches %s (its waves: %v)", f.Path, strings.Join(what, " and "), f.Waves())
	}
	return cs, nil
}

// Report reads the legs' results and builds the fleet report of the
// selection; problems reading files are returned for the caller to show.
func Report(f *spec.Fleet, clusters []*spec.FleetCluster, wave int, resultPaths []string) (*model.FleetReport, []string) {
	legs, problems := ReadLegs(resultPaths)
	return model.BuildFleetReport(f.Metadata.Name, "", wave, f.Rollout.MaxFailures, Members(clusters), legs), problems
}
