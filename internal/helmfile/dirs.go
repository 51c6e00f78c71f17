package helmfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/khook/khook/internal/importer"
)

// defaultState is what helmfile v1.8.0 reads when it is run in dir without
// --file (pkg/app findDesiredStateFiles): helmfile.yaml or
// helmfile.yaml.gotmpl, else the folder helmfile.d; two of them is an
// error there, so it is here. "" when dir holds none of them: then dir is
// read as helmfile --file dir reads it (treeDir).
func (c *converter) defaultState(dir string) (string, error) {
	var found []string
	for _, name := range []string{"helmfile.yaml", "helmfile.yaml.gotmpl", "helmfile.d"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.IsDir() == (name == "helmfile.d") {
			found = append(found, name)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return filepath.Join(dir, found[0]), nil
	}
	return "", &InputError{File: c.l.display(dir), Msg: fmt.Sprintf("both %s and %s are in this folder, and helmfile run here without --file refuses to choose between them: name the one to import", found[0], found[1])}
}

// stateFiles is what helmfile v1.8.0 takes from a folder given where it
// expects a state file (--file DIR, a helmfiles: entry): findDesiredStateFiles
// globs DIR/*.y*ml and DIR/*.y*ml.gotmpl and sorts them by name.
func stateFiles(dir string) []string {
	yml, _ := filepath.Glob(filepath.Join(dir, "*.y*ml"))
	tmpl, _ := filepath.Glob(filepath.Join(dir, "*.y*ml.gotmpl"))
	files := append(yml, tmpl...)
	sort.Strings(files)
	return files
}

// treeDir is a folder given as a state file: its stateFiles, processed as
// helmfile processes them (in parallel unless --sequential-helmfiles). A
// file that fails fails the import at its own FILE:LINE, as helmfile names
// the file ("in DIR/FILE: ...").
func (c *converter) treeDir(path string, overrides map[string]any, depth int, sub bool, prev []*rel) ([]*rel, error) {
	files := stateFiles(path)
	if len(files) == 0 {
		if sub {
			// helmfile finds no state file and goes on (NoMatchingHelmfileError
			// is not an error for a helmfiles: entry).
			c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: c.l.display(path)}, What: "no *.yaml, *.yml, *.yaml.gotmpl or *.yml.gotmpl file in this folder", Why: "helmfile skips this helmfiles: entry, so no release comes from it"})
			return prev, nil
		}
		return nil, &InputError{File: c.l.display(path), Msg: "no helmfile in this folder: neither helmfile.yaml, helmfile.yaml.gotmpl nor helmfile.d/ (what helmfile reads run here), nor a *.yaml, *.yml, *.yaml.gotmpl or *.yml.gotmpl file (what helmfile --file reads of a folder)"}
	}
	// helmfile (pkg/app visitStates) skips a state file that does not
	// define the chosen environment and fails only when no file runs.
	var skipped []Note
	var first *InputError
	tail, err := c.parallel(files, overrides, depth+1, sub, prev, func(f string, err error) (bool, error) {
		var ie *InputError
		if errors.As(err, &ie) && ie.notDefined {
			skipped = append(skipped, Note{Loc: importer.Loc{File: c.l.display(f)}, What: fmt.Sprintf("environment %q is not defined in this file", c.opts.Environment),
				Why: "helmfile skips a helmfile.d file without it, so none of its releases is imported"})
			// Refuse with a file that lists environments to choose from.
			if first == nil || ie.envsKnown && !first.envsKnown {
				first = ie
			}
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return nil, err
	}
	if len(skipped) == len(files) {
		return nil, first
	}
	c.parallelNote(importer.Loc{File: c.l.display(path)}, len(files)-len(skipped))
	c.res.Info = append(c.res.Info, skipped...)
	return tail, nil
}

// parallelNote says, for several files helmfile processes at once (a
// helmfile.d, a helmfiles: glob), how their order was written.
func (c *converter) parallelNote(where importer.Loc, files int) {
	if files < 2 {
		return
	}
	why := "helmfile v1.8.0 processes them in parallel (unless it is run with --sequential-helmfiles), so no order between their releases is written; import with --sequential-helmfiles if your task file passes it"
	if c.opts.SequentialHelmfiles {
		why = "processed one after the other in name order, as helmfile --sequential-helmfiles does: each file's releases need the previous file's"
	}
	c.res.Info = append(c.res.Info, Note{Loc: where, What: fmt.Sprintf("%d helmfiles", files), Why: why})
}
