package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/sops"
	"github.com/khook/khook/spec"
)

// CheckEncrypted reads the sops-encrypted files of the included steps
// (spec.Step.Inputs: manifest files, the files a kustomization reads,
// valuesFrom files) without any key, as
// validate and plan --offline do: a file whose sops metadata does not parse
// is a problem; a well-formed one is a note that its values were not
// decrypted. Files that cannot be read are left to the step.
func CheckEncrypted(s *spec.Spec) (problems, notes spec.Problems) {
	eachEncrypted(s, func(c candidate, what string, data []byte) {
		_, info, err := sops.Check(what, data)
		switch {
		case err != nil:
			problems = append(problems, spec.Problem{Pos: s.PosOf(c.path), Path: c.path, Message: err.Error()})
		case info != nil:
			notes = append(notes, spec.Problem{Pos: s.PosOf(c.path), Path: c.path, Message: encryptedNote(what, info)})
		}
	})
	return problems, notes
}

// OpenEncrypted decrypts the same files with the keys at hand, registering
// their values with r. apply runs it before it connects: a file no key
// opens, or one edited without sops, stops the run before anything is
// written, and every secret is known to the redactor before a step prints.
func OpenEncrypted(s *spec.Spec, r *redact.Redactor) spec.Problems {
	var problems spec.Problems
	eachEncrypted(s, func(c candidate, what string, data []byte) {
		if _, err := sops.Decrypt(what, data, r); err != nil {
			problems = append(problems, spec.Problem{Pos: s.PosOf(c.path), Path: c.path, Message: err.Error()})
		}
	})
	problems.Sort()
	return problems
}

// eachEncrypted calls fn with each sops-encrypted file of the included
// steps, named as the step's own reader names it.
func eachEncrypted(s *spec.Spec, fn func(c candidate, what string, data []byte)) {
	for _, st := range s.Steps {
		if st.Excluded() {
			continue
		}
		for _, c := range encryptedCandidates(st) {
			p := c.file
			if !filepath.IsAbs(p) {
				p = filepath.Join(s.BaseDir, p)
			}
			if c.kind == kustomizationKind {
				// Every file its render reads, bases and patches included; a
				// kustomization that does not render is left to its step.
				files, _ := KustomizationFiles(p)
				for _, f := range files {
					if data, err := os.ReadFile(f); err == nil {
						if _, ok := sops.Detect(data); ok {
							fn(c, f, data) // named as the step's own reader names it
						}
					}
				}
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			if _, ok := sops.Detect(data); ok {
				fn(c, c.kind+" "+c.file, data)
			}
		}
	}
}

// encryptedNote says a file was read without being decrypted.
func encryptedNote(what string, info *sops.Info) string {
	return fmt.Sprintf("%s is sops-encrypted (for %s): its structure is valid, its values could not be decrypted without keys",
		what, strings.Join(info.Recipients, ", "))
}

type candidate struct{ kind, file, path string }

// kustomizationKind marks a kustomize: source, whose files are its render's.
const kustomizationKind = "kustomization"

func encryptedCandidates(st *spec.Step) []candidate {
	var out []candidate
	for _, in := range st.Inputs() {
		kind := in.What
		switch in.What {
		case spec.InputChart:
			continue // Helm reads a chart as it is
		case spec.InputKustomize:
			kind = kustomizationKind
		case spec.InputValues: // as helm's values reader names it
			kind = "valuesFrom[" + in.Field[strings.LastIndex(in.Field, ".")+1:] + "] file"
		}
		out = append(out, candidate{kind, in.Path, st.Path + "." + in.Field})
	}
	return out
}
