package spec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
)

// FleetKind is the kind of a fleet file: one spec run across many clusters.
const FleetKind = "Fleet"

// Fleet is a loaded and validated fleet file (kind: Fleet): the spec every
// cluster runs and, per cluster, its wave, labels, credentials and the
// overlays and variables that make it different.
type Fleet struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   Metadata       `json:"metadata"`
	Files      []string       `json:"files"`
	Policies   []string       `json:"policies,omitempty"` // --policy files every cluster's run checks
	Clusters   []FleetCluster `json:"clusters"`
	Rollout    FleetRollout   `json:"rollout,omitempty"`

	// Path is the fleet file as given; relative paths in it are relative
	// to its directory (Dir).
	Path      string         `json:"-"`
	Positions map[string]Pos `json:"-"`
}

// FleetCluster is one cluster of a fleet.
type FleetCluster struct {
	Name   string            `json:"name"`
	Wave   int               `json:"wave,omitempty"` // 1 when not written
	Labels map[string]string `json:"labels,omitempty"`
	// Context is a context of the run's kubeconfig (local runs);
	// KubeconfigSecret names the CI secret (an environment variable when
	// khook runs) holding this cluster's kubeconfig.
	Context          string            `json:"context,omitempty"`
	KubeconfigSecret string            `json:"kubeconfigSecret,omitempty"`
	Files            []string          `json:"files,omitempty"`    // overlays after the fleet's files
	VarFiles         []string          `json:"varFiles,omitempty"` // --var-file, in order
	Vars             map[string]string `json:"vars,omitempty"`     // --set NAME=value
	Policies         []string          `json:"policies,omitempty"` // --policy, after the fleet's
}

// FleetRollout says when a wave halts the rollout.
type FleetRollout struct {
	// MaxFailures is how many clusters of a wave may fail before the
	// rollout halts (default 0: any failure halts it).
	MaxFailures int `json:"maxFailures,omitempty"`
}

// LoadFleet reads and validates a fleet file strictly: unknown fields,
// wrong types, duplicate cluster names, waves below 1 and missing files
// are Problems, each at file:line:col. Other errors (an unreadable file)
// are plain errors.
func LoadFleet(path string) (*Fleet, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the fleet file: %w", err)
	}
	if len(src) > MaxFileSize {
		return nil, fmt.Errorf("fleet file %s is larger than %d MiB; khook refuses files this large", path, MaxFileSize>>20)
	}
	name := path
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, Problems{{Pos: Pos{File: name}, Message: "the fleet file is empty", Hint: "start with apiVersion: " + APIVersion + " and kind: " + FleetKind}}
	}
	pm := &posMap{file: name, orig: src, out: src, segs: []segment{{literal: true, n: len(src)}}}
	root, probs := parseDocument(src, pm, name)
	if len(probs) > 0 {
		return nil, fleetProblems(probs)
	}
	f := &Fleet{Path: path, Positions: map[string]Pos{}}
	d := &decoder{pm: pm, pos: f.Positions, bad: map[string]bool{}, typos: map[string]bool{}}
	d.decode(root, nil, "", reflect.ValueOf(f).Elem())
	probs = append(d.probs, validateFleet(f, d.bad)...)
	for i := range f.Clusters {
		if f.Clusters[i].Wave == 0 {
			f.Clusters[i].Wave = 1
		}
	}
	if len(probs) > 0 {
		return f, fleetProblems(probs)
	}
	return f, nil
}

func fleetProblems(probs Problems) Problems {
	probs.Sort()
	return probs
}

// Dir is the directory relative paths in the fleet file are relative to.
func (f *Fleet) Dir() string { return filepath.Dir(f.Path) }

// Resolve makes a path written in the fleet file usable from khook's
// working directory.
func (f *Fleet) Resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.Dir(), p)
}

// Cluster returns the cluster named name.
func (f *Fleet) Cluster(name string) (*FleetCluster, error) {
	for i := range f.Clusters {
		if f.Clusters[i].Name == name {
			return &f.Clusters[i], nil
		}
	}
	names := make([]string, len(f.Clusters))
	for i, c := range f.Clusters {
		names[i] = c.Name
	}
	hint := ""
	if s := suggest(name, names); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	return nil, fmt.Errorf("fleet %s has no cluster %q%s", f.Path, name, hint)
}

// LegInputs are the spec inputs of a run: its spec files, var files,
// --set pairs and policy files.
type LegInputs struct {
	Files, VarFiles, Set, Policies []string
}

// Leg is what one cluster's leg loads, the one rule every front end builds
// a leg by (plan and apply --fleet --cluster, plan --fleet, khook ci's
// legs, fleet matrix --changed-since), so a fleet input reaches them all:
// the fleet's spec files then the cluster's overlays (run's are replaced),
// and the cluster's var files, vars and the fleet's and its policy files,
// each before the run's own (--var-file, --set, --policy or khook ci's
// inputs: a later one wins).
func (f *Fleet) Leg(c *FleetCluster, run LegInputs) LegInputs {
	return LegInputs{
		Files:    f.SpecFiles(c),
		VarFiles: append(f.VarFilePaths(c), run.VarFiles...),
		Set:      append(c.Set(), run.Set...),
		Policies: append(f.PolicyPaths(c), run.Policies...),
	}
}

// SpecFiles are the spec files a cluster runs: the fleet's, then its
// overlays, resolved against the fleet file's directory.
func (f *Fleet) SpecFiles(c *FleetCluster) []string {
	var out []string
	for _, p := range append(append([]string(nil), f.Files...), c.Files...) {
		out = append(out, f.Resolve(p))
	}
	return out
}

// VarFilePaths are the cluster's var files, resolved.
func (f *Fleet) VarFilePaths(c *FleetCluster) []string {
	out := make([]string, len(c.VarFiles))
	for i, p := range c.VarFiles {
		out[i] = f.Resolve(p)
	}
	return out
}

// PolicyPaths are the policy files a cluster's run checks: the fleet's,
// then its own, resolved. A run loads them as --policy files, so they are
// in khook files' list (runner/command.Files) like its spec files.
func (f *Fleet) PolicyPaths(c *FleetCluster) []string {
	var out []string
	for _, p := range append(append([]string(nil), f.Policies...), c.Policies...) {
		out = append(out, f.Resolve(p))
	}
	return out
}

// Set is the cluster's vars as NAME=value, sorted by name (--set form).
func (c *FleetCluster) Set() []string {
	names := make([]string, 0, len(c.Vars))
	for k := range c.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, k := range names {
		out[i] = k + "=" + c.Vars[k]
	}
	return out
}

// PosOf is the position of a field path, or its nearest written parent.
func (f *Fleet) PosOf(path string) Pos {
	for {
		if p, ok := f.Positions[path]; ok {
			return p
		}
		i := lastDot(path)
		if i < 0 {
			if p, ok := f.Positions[""]; ok {
				return p
			}
			return Pos{File: f.Path}
		}
		path = path[:i]
	}
}

// validateFleet finds every problem of a decoded fleet.
func validateFleet(f *Fleet, bad map[string]bool) Problems {
	var probs Problems
	errorf := func(path, hint, format string, args ...any) {
		for p := path; ; p = p[:lastDot(p)] {
			if bad[p] {
				return
			}
			if lastDot(p) < 0 {
				break
			}
		}
		probs = append(probs, Problem{Pos: f.PosOf(path), Path: path, Message: describe(path) + fmt.Sprintf(format, args...), Hint: hint})
	}
	_, written := f.Positions["apiVersion"]
	switch {
	case !written:
		errorf("apiVersion", "add apiVersion: "+APIVersion, "is required")
	case f.APIVersion != APIVersion:
		errorf("apiVersion", "", "must be %s, got %q", APIVersion, f.APIVersion)
	}
	_, written = f.Positions["kind"]
	switch {
	case !written:
		errorf("kind", "add kind: "+FleetKind, "is required")
	case f.Kind != FleetKind:
		errorf("kind", "a fleet file has kind: "+FleetKind+"; pass a spec with -f, a fleet with --fleet", "must be %s, got %q", FleetKind, f.Kind)
	}
	if f.Metadata.Name == "" {
		errorf("metadata.name", "add metadata: {name: platform}", "is required")
	} else if msg := checkSubdomain(f.Metadata.Name, 253); msg != "" {
		errorf("metadata.name", "", "%s", msg)
	}
	if len(f.Files) == 0 {
		errorf("files", "add files: [khook.yaml], the spec every cluster runs", "a fleet needs at least one spec file")
	}
	checkFiles := func(path string, files []string) {
		for i, p := range files {
			fp := fmt.Sprintf("%s.%d", path, i)
			if p == "" {
				errorf(fp, "", "is empty: name a file")
				continue
			}
			if fi, err := os.Stat(f.Resolve(p)); err != nil {
				errorf(fp, "paths are relative to the fleet file's directory", "%s does not exist", f.Resolve(p))
			} else if fi.IsDir() {
				errorf(fp, "", "%s is a directory, not a file", f.Resolve(p))
			}
		}
	}
	checkFiles("files", f.Files)
	checkFiles("policies", f.Policies)
	if f.Rollout.MaxFailures < 0 {
		errorf("rollout.maxFailures", "", "must be 0 or more, got %d", f.Rollout.MaxFailures)
	}
	if len(f.Clusters) == 0 {
		errorf("clusters", "add clusters: [{name: staging, context: staging}]", "a fleet needs at least one cluster")
	}
	seen := map[string]int{}
	for i, c := range f.Clusters {
		p := fmt.Sprintf("clusters.%d", i)
		if bad[p] {
			continue
		}
		switch {
		case c.Name == "":
			errorf(p+".name", "", "is required")
		case checkLabel(c.Name) != "":
			errorf(p+".name", "a cluster name is a matrix value, an identifier and a file name", "%s", checkLabel(c.Name))
		default:
			if j, dup := seen[c.Name]; dup {
				errorf(p+".name", "", "cluster %q is already defined at clusters.%d (%s)", c.Name, j, f.PosOf(fmt.Sprintf("clusters.%d.name", j)))
			} else {
				seen[c.Name] = i
			}
		}
		if _, written := f.Positions[p+".wave"]; written && c.Wave < 1 {
			errorf(p+".wave", "waves are numbered from 1 and run in order", "must be 1 or more, got %d", c.Wave)
		}
		if c.Context == "" && c.KubeconfigSecret == "" && len(f.Clusters) > 1 {
			errorf(p, "set context: (a context of the run's kubeconfig) or kubeconfigSecret: (the CI secret holding its kubeconfig)",
				"cluster %q names no context and no kubeconfigSecret, so it would plan against whatever cluster the run's kubeconfig points at, as every other such cluster would", c.Name)
		}
		if c.KubeconfigSecret != "" && !envVarName.MatchString(c.KubeconfigSecret) {
			errorf(p+".kubeconfigSecret", "name the secret as the CI knows it, e.g. KUBECONFIG_STAGING", "%q is not a secret or variable name", c.KubeconfigSecret)
		}
		for k := range c.Vars {
			if !varName.MatchString(k) {
				errorf(joinPath(p+".vars", k), "", "%q is not a variable name: use letters, digits and _", k)
			}
		}
		checkFiles(p+".files", c.Files)
		checkFiles(p+".varFiles", c.VarFiles)
		checkFiles(p+".policies", c.Policies)
	}
	return probs
}
