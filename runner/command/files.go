package command

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/spec"
)

// Files lists, sorted and absolute, every file a run of s reads: its spec
// files (base and overlays), varFiles (--var-file), the --policy files
// loaded with it (s.PolicyFiles), and per step the local
// inputs its state hash covers (of a step when: excludes, those that exist:
// the plan's digest of the spec reads them) (spec.Step.Inputs:
// manifest and values files, local charts, kustomizations), a chart
// directory as every file in it (Helm loads them all) and a kustomization
// as the files its render reads. khook files prints it for CI path filters,
// and khook ci's changed-only and khook fleet matrix --changed-since decide
// from it whether a change touches the spec.
func Files(s *spec.Spec, varFiles []string) ([]string, error) {
	set := map[string]bool{}
	add := func(p string) {
		if abs, err := filepath.Abs(p); err == nil {
			set[abs] = true
		}
	}
	for _, f := range s.Files {
		if f != spec.StdinName && f != "-" {
			add(f)
		}
	}
	for _, f := range varFiles {
		add(f)
	}
	// A plan reads its --policy files (the CI input policies) too, so a
	// change to one is a change to the plan.
	for _, f := range s.PolicyFiles {
		if f != spec.StdinName && f != "-" {
			add(f)
		}
	}
	for _, st := range s.Steps {
		for _, ref := range st.Inputs() {
			p := ref.Path
			if !filepath.IsAbs(p) {
				p = filepath.Join(s.BaseDir, p)
			}
			switch info, err := os.Stat(p); {
			case err != nil && st.Skip == spec.SkipWhen:
				continue // its files may not exist where when: excludes it
			case err != nil:
				return nil, fmt.Errorf("step %s: its %s %s: %v", st.Name, ref.What, ref.Path, err)
			case ref.What == spec.InputKustomize:
				files, err := manifest.KustomizationFiles(p)
				if err != nil {
					return nil, fmt.Errorf("step %s: its %s %s: %v", st.Name, ref.What, ref.Path, err)
				}
				for _, f := range files {
					add(f)
				}
			case info.IsDir():
				err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() {
						add(path)
					}
					return err
				})
				if err != nil {
					return nil, fmt.Errorf("step %s: its %s %s: %v", st.Name, ref.What, ref.Path, err)
				}
			default:
				add(p)
			}
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}
