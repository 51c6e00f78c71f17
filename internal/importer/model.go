// Package importer is the one intermediate model of `khook import`: the
// steps an importer made of another tool's file, each with the FILE:LINE
// it came from, the variables it declared (defaults, required, secret),
// what it did not carry and why, and the fate of every command it read.
// One writer renders the model as a khook spec (a header naming what was
// not carried, `# from FILE:LINE` above each step) and checks it as
// `khook validate` does: spec.Load, then validate's own check of what the
// steps apply and render, handed in by the command (Check).
//
// Both importers produce into it: internal/shscript (scripts) and
// internal/helmfile (helmfiles, whose hooks' commands go through
// internal/shscript as script lines).
//
// May import: spec and the ground floor; nothing of the runner or the CLI.
package importer

import (
	"sort"
	"strconv"
	"strings"
)

// Loc is where something was written in the imported file.
type Loc struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

func (l Loc) String() string {
	if l.Line <= 0 {
		return l.File
	}
	return l.File + ":" + strconv.Itoa(l.Line)
}

// Note is one thing of the imported file and what became of it: one
// sentence each, without a trailing period.
type Note struct {
	Loc
	What string `json:"what"` // "docker build -t app ."
	Why  string `json:"why"`  // "khook runs no shell commands; build the image in CI before khook"
	// Same marks an Info note where nothing the cluster gets differs
	// (sleep 10: nothing to carry): how the line was read, which the
	// header lists apart from the differences (SplitInfo).
	Same bool `json:"same,omitempty"`
}

// SplitInfo is the one rule of which Info notes are differences and
// which only say how a line was read (Same): "Carried with a difference"
// lists only the first (trials 46s67: sleeps listed as differences).
func SplitInfo(info []Note) (differences, notes []Note) {
	for _, n := range info {
		if n.Same {
			notes = append(notes, n)
		} else {
			differences = append(differences, n)
		}
	}
	return differences, notes
}

func (n Note) String() string {
	if n.Why == "" {
		return n.Loc.String() + ": " + n.What
	}
	return n.Loc.String() + ": " + n.What + ": " + n.Why
}

// Var is a khook variable the spec declares.
type Var struct {
	Name     string
	Default  *string // nil: none
	Required bool
	// RequiredWith: required where one of these is given (the source
	// stops without it on the path where they are set)
	RequiredWith []string
	// RequiredWithout: required where none of these is given (the
	// source falls back to it there, and stops where it is empty)
	RequiredWithout []string
	Secret          bool // comes only from KHOOK_SECRET_NAME; never a default
	// Computed: the source computes it when it runs ($(kubectl get …),
	// $(curl …)), which khook does not: a step that uses it asks for it
	Computed    bool
	Description string
	From        Loc
	// Example is a value that fits where the variable is used (a
	// repository's URL), for validating the spec written; "" is "x".
	Example string
	// Format is the spec's format: where the step constrains the value
	// (url for a repository), so vars' JSON schema says what validate
	// checks (trial 46zo's D6)
	Format string
}

// Step is one step written, with the line it came from.
type Step struct {
	From Loc
	Out  *OutStep
	// Call is the call of the function From is in, " (in k, called at
	// FILE:LINE)", or "": which call of a function made the step
	Call string
}

// Fate of a command of the imported file.
type Fate string

const (
	FateStep       Fate = "step"        // became a step (Step names it)
	FateFolded     Fate = "folded"      // folded into a step (helm repo add → repo:)
	FateReadOnly   Fate = "read-only"   // changes nothing in the cluster
	FateNotCarried Fate = "not carried" // Why says what to do instead
)

// Command is one helm or kubectl command and its fate: every one is
// accounted for by its line.
type Command struct {
	Loc
	Text string `json:"text"`
	Fate Fate   `json:"fate"`
	Step string `json:"step,omitempty"`
	Why  string `json:"why,omitempty"`
}

// Verdict of an import.
type Verdict string

const (
	Faithful Verdict = "faithful" // everything that decides the cluster came over
	Partial  Verdict = "partial"  // the spec is written; NotCarried says what it lacks
	Refused  Verdict = "refused"  // nothing could be written
)

// Model is an import's result before it is written.
type Model struct {
	// Source is the imported file as the user named it; Tool says how it
	// was imported ("khook import script").
	Source, Tool string
	// Dir is the directory the spec is written to: its relative file:,
	// kustomize: and chart paths are read from there ("" is the working
	// directory).
	Dir        string
	Name       string // metadata.name
	Vars       []*Var
	Steps      []*Step
	NotCarried []Note // lost: the spec does not do these
	Info       []Note // carried with a difference worth knowing
	Commands   []Command
	// ChartCRDs are the charts whose crds/ the source applies itself
	// before it installs them (helm pull --untar, then kubectl apply -f
	// DIR/crds), which is a helm step's crds: upgrade.
	ChartCRDs []PulledChart
	// Logins are the registries the source logs in to (helm registry
	// login): a helm step that installs an oci:// chart from one carries
	// its auth:. A script's own steps have it already; a helmfile hook's
	// login is for the releases.
	Logins []Login
}

// Login is a registry's credentials, as a helm step's auth: writes them.
type Login struct {
	Host string // host[:port]
	Auth OutAuth
	Loc  Loc
}

// PulledChart is a chart a source pulls (helm pull|fetch --untar).
type PulledChart struct {
	Chart, Version string
	Loc            Loc // the pull
	Applied        Loc // the kubectl apply of its crds/
}

// Is says whether the pulled chart is the helm step h's: the same chart
// name (a repository alias or OCI path before it aside) and, where both
// say one, the same version.
func (p PulledChart) Is(h *OutHelm) bool {
	base := func(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }
	return base(p.Chart) == base(h.Chart) && (p.Version == "" || h.Version == "" || p.Version == h.Version)
}

// Verdict is Refused when no step was written, Partial when something was
// not carried, else Faithful.
func (m *Model) Verdict() Verdict {
	switch {
	case len(m.Steps) == 0:
		// nothing to write: a spec with steps: [] is one validate refuses
		// (trial 46s67k's D1, "import faithful")
		return Refused
	case len(m.NotCarried) > 0:
		return Partial
	}
	return Faithful
}

// Var returns the declared variable name, or nil.
func (m *Model) Var(name string) *Var {
	for _, v := range m.Vars {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// Counts is how many commands met each fate.
func (m *Model) Counts() map[Fate]int {
	c := map[Fate]int{}
	for _, cmd := range m.Commands {
		c[cmd.Fate]++
	}
	return c
}

// SortNotes orders notes by file and line, keeping the order of equal ones.
func SortNotes(ns []Note) {
	sort.SliceStable(ns, func(i, j int) bool {
		if ns[i].File != ns[j].File {
			return ns[i].File < ns[j].File
		}
		return ns[i].Line < ns[j].Line
	})
}
