// Package helmfile imports a helmfile repository into a khook spec: it
// renders the helmfile as helmfile v1.8.0 does (sprig plus helmfile's
// template functions, environments, bases, sub-helmfiles, templates with
// inherit, `---` parts, the .gotmpl rule), resolves every release (name,
// namespace, chart, version, needs, merged values) and maps each onto
// khook steps, saying per release what came over, what did not, and a
// verdict.
//
// The API, for the CLI (internal/cli/importcmd) and for tests that compare
// the import with helmfile itself:
//
//	res, err := helmfile.Import(dir, "helmfile.yaml", helmfile.Options{Environment: "default"})
//	// err: bad input (a template error, YAML that does not parse after
//	//      rendering, a missing values file): *InputError, one sentence
//	//      with FILE:LINE; nothing is to be written.
//	res.Spec       // the khook spec YAML, header included
//	res.Files      // files to write beside the spec (rendered .gotmpl values)
//	res.Releases   // per release: Resolved (name, namespace, chart,
//	               // version, needs, merged values), Step, Carried,
//	               // NotCarried, Verdict
//	res.Verdict()  // Faithful only when every release is faithful and
//	               // nothing of the helmfile was dropped
//
// Environment variables the helmfile reads (env, requiredEnv) stay
// references: a path under a variable that names a directory of the
// checkout (ROOT_DIR) is written relative to the spec; any other use
// becomes ${NAME} with a declared khook variable (required, or with the
// helmfile's default). See docs/cli.md, `khook import helmfile`.
//
// May import: spec, sops, redact; helm's strvals (helm --set syntax); no
// runner or CLI package.
package helmfile

import (
	"os"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/redact"
)

// Options of an import.
type Options struct {
	// Environment is helmfile's --environment; "" is, as in helmfile,
	// the HELMFILE_ENVIRONMENT environment variable (looked up through
	// Env) when it is set and not empty, else "default".
	Environment string
	// AllowExec lets the helmfile's exec/envExec template functions run
	// commands; without it a call is refused at its FILE:LINE.
	AllowExec bool
	// Env looks up an environment variable; nil is os.LookupEnv.
	Env func(name string) (string, bool)
	// SpecDir is the directory the spec will be written to: relative paths
	// in the spec are relative to it. "" is the helmfile's directory.
	SpecDir string
	// Name is the spec's metadata.name; "" is the helmfile's directory name.
	Name string
	// SequentialHelmfiles is helmfile's --sequential-helmfiles: the files
	// of a helmfile.d or of a helmfiles: glob run one after the other in
	// name order, not in parallel.
	SequentialHelmfiles bool
	// Check is `khook validate`'s check of what the steps apply and
	// render (runner/plan.Validate, handed in by the command): a release
	// whose step it refuses is refused, a hook's step dropped. Nil checks
	// only that the spec loads.
	Check importer.Check
	// Redactor is registered with every secret the import reads, where it
	// reads it (a secret-looking environment variable's value, a decrypted
	// sops value, a secret file's content, a value derived from one, a
	// literal credential): the command passes the one that masks its
	// output. The import masks its own notes and errors with it too, so no
	// message carries a secret on any path. Nil: one of its own.
	Redactor *redact.Redactor

	// placeholders renders an unset requiredEnv as a placeholder that
	// becomes ${NAME} (Import's first try; see unsetEnv).
	placeholders bool
	// memo makes the volatile functions agree across the import's
	// renderings (volatileMemo).
	memo *volatileMemo
}

// Verdict, Note and Loc are the import model's (internal/importer): the
// helmfile importer produces into it and writes through its writer.
type (
	Verdict = importer.Verdict
	Note    = importer.Note
)

const (
	Faithful = importer.Faithful
	Partial  = importer.Partial
	Refused  = importer.Refused
)

// Resolved is a release as helmfile resolves it: what a comparison with
// `helmfile build`/`write-values` checks.
type Resolved struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	Chart     string         `json:"chart"`   // as helmfile has it after templating (repo/chart, oci://…, ./path)
	Version   string         `json:"version"` // "" when the helmfile pins none
	Needs     []string       `json:"needs"`   // namespace/name as helmfile resolves them
	Installed bool           `json:"installed"`
	Values    map[string]any `json:"values"` // values files, inline values, set/setString merged as helm would (secrets excluded)
	// SecretFiles are the secrets: files (sops), not merged into Values.
	SecretFiles []string `json:"secretFiles,omitempty"`
}

// Release is one release of the helmfile and what the import made of it.
type Release struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Resolved Resolved `json:"resolved"`
	// Step is the name of its khook step ("" when refused); Steps are every
	// step written for it (hooks become apply/wait steps around it).
	Step       string   `json:"step,omitempty"`
	Steps      []string `json:"steps,omitempty"`
	Carried    []string `json:"carried"`
	NotCarried []Note   `json:"notCarried,omitempty"`
	Info       []Note   `json:"info,omitempty"` // mapped with a difference worth knowing, not a loss
	Verdict    Verdict  `json:"verdict"`
}

// File is a file the import writes beside the spec.
type File struct {
	Path string // relative to Options.SpecDir
	Data []byte
}

// Result of an import.
type Result struct {
	Spec     []byte
	Files    []File
	Releases []*Release
	Vars     []*importer.Var
	// NotCarried and Info are about the helmfile as a whole (top-level
	// keys, repositories).
	NotCarried []Note
	Info       []Note
	// Environment is the environment rendered, and EnvironmentFrom where
	// it came from: EnvFlag, EnvVariable or EnvDefault.
	Environment     string
	EnvironmentFrom string
}

// Where the environment an import renders came from (Result.EnvironmentFrom).
const (
	EnvFlag     = "--environment"
	EnvVariable = "HELMFILE_ENVIRONMENT"
	EnvDefault  = "default"
)

// environment is the environment helmfile v1.8.0 renders and where it
// comes from: --environment (-e) when given and not empty, else the
// HELMFILE_ENVIRONMENT environment variable when set and not empty, else
// "default". helmfile v1.8.0, pkg/config/global.go, (*GlobalImpl).Env:
//
//	case g.Environment != "": env = g.Environment
//	case os.Getenv("HELMFILE_ENVIRONMENT") != "": env = os.Getenv("HELMFILE_ENVIRONMENT")
//	default: env = state.DefaultEnv
//
// (cmd/root.go's --environment: "Overrides "HELMFILE_ENVIRONMENT" OS
// environment variable when specified. defaults to "default"").
func environment(opts Options) (name, from string) {
	if opts.Environment != "" {
		return opts.Environment, EnvFlag
	}
	lookup := opts.Env
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if v, _ := lookup(EnvVariable); v != "" {
		return v, EnvVariable
	}
	return "default", EnvDefault
}

// Verdict is Faithful when every release is and nothing at file level was
// dropped; Refused when no release could be written; else Partial.
func (r *Result) Verdict() Verdict {
	written := 0
	v := Faithful
	if len(r.NotCarried) > 0 {
		v = Partial
	}
	for _, rel := range r.Releases {
		if rel.Verdict != Refused {
			written++
		}
		if rel.Verdict != Faithful {
			v = Partial
		}
	}
	if written == 0 {
		return Refused
	}
	return v
}

// InputError is input the import cannot read: a template error, YAML that
// does not parse after rendering, a missing file. Nothing is written.
type InputError struct {
	File string
	Line int
	Msg  string

	at       string // a template error's failing action, as in <.Values.x>
	envUndef bool   // explained by an environment the helmfile does not define
	// notDefined: helmfile's `environment "NAME" is not defined`, which
	// makes it skip a helmfile.d file rather than fail (refuseEnv).
	notDefined bool
	envsKnown  bool // the file defines other environments, which the message lists
}

func (e *InputError) Error() string {
	return importer.Loc{File: e.File, Line: e.Line}.String() + ": " + e.Msg
}
