package shscript

import (
	"slices"
	"strings"

	"github.com/khook/khook/internal/importer"
)

// A script without set -e carries on after a command fails; khook stops
// the run at the first step that fails. The walk keeps bash's errexit
// (set -e, set -o errexit, set -eu…, #!/bin/bash -e; set +e turns it off)
// and the header says it once when a step was made where it was off.

// shebangOpt: the script's #! line passes -o (e, u) to its shell.
func shebangOpt(src []byte, o byte) bool {
	line, _, _ := strings.Cut(string(src), "\n")
	if !strings.HasPrefix(line, "#!") {
		return false
	}
	fields := strings.Fields(line[2:])
	if len(fields) < 2 { // "#!" or "#!/bin/bash": no options
		return false
	}
	for _, f := range fields[1:] {
		if shortOpt(f, '-', o) {
			return true
		}
	}
	return false
}

// shortOpt: f is a cluster of short options (-eu, +e) with sign that holds o.
func shortOpt(f string, sign, o byte) bool {
	return len(f) > 1 && f[0] == sign && f[1] != sign && strings.IndexByte(f[1:], o) >= 0
}

// setOpts follows set's errexit (-e, -o errexit, +e, +o errexit) and
// nounset (-u, -o nounset: an unset variable is an error, not empty) and
// allexport (-a: what the script sets after it, a .env it sources, is
// exported, so envsubst sees it).
func (t *translator) setOpts(args []string) {
	for i, a := range args {
		switch {
		case (a == "-o" || a == "+o") && i+1 < len(args) && args[i+1] == "errexit":
			t.errexit = a == "-o"
		case (a == "-o" || a == "+o") && i+1 < len(args) && args[i+1] == "nounset":
			t.nounset = a == "-o"
		case (a == "-o" || a == "+o") && i+1 < len(args) && args[i+1] == "allexport":
			t.allexport = a == "-o"
		}
		for _, o := range []struct {
			c   byte
			opt *bool
		}{{'e', &t.errexit}, {'u', &t.nounset}, {'a', &t.allexport}} {
			switch {
			case shortOpt(a, '-', o.c):
				*o.opt = true
			case shortOpt(a, '+', o.c):
				*o.opt = false
			}
		}
	}
}

// sayCarriesOn is the header's one note when a step was made where the
// script carries on after a failing command. Where set -e comes later
// in the script and steps were made after it, only the steps before it
// carry on (trial 46s68f's D3: set -e at line 91, before the call that
// runs all but one command, was said missing for the whole script).
func (t *translator) sayCarriesOn() {
	// a step dropped since (a delete whose re-create is not carried) is no step
	on := slices.DeleteFunc(t.carriesOn, func(s *importer.Step) bool { return !slices.Contains(t.m.Steps, s) })
	if len(on) == 0 {
		return
	}
	then := "khook stops the run at the first step that fails, and the steps after it do not run (write || true in the script where a failure is expected, and import again)"
	if !t.errexitSteps || t.errexitAt.File == "" {
		t.m.Info = append(t.m.Info, importer.Note{Loc: importer.Loc{File: t.m.Source}, What: "without set -e",
			Why: "the script carries on after a command fails; " + then})
		return
	}
	var at []string
	for _, st := range on {
		if s := st.From.String(); !slices.Contains(at, s) {
			at = append(at, s)
		}
	}
	t.m.Info = append(t.m.Info, importer.Note{Loc: importer.Loc{File: t.m.Source}, What: "without set -e at " + strings.Join(at, ", "),
		Why: "set -e is off there (the script sets it at " + t.errexitAt.String() + "), so the script carries on after a command there fails; " + then})
}
