package spec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/khook/khook/redact"
)

// LoadOptions says where a spec and its variables come from.
type LoadOptions struct {
	Files        []string  // spec files in order (base, then overlays); "-" is Stdin
	Stdin        io.Reader // read when a file is "-"
	Set          []string  // --set NAME=value, in order (later wins)
	VarFiles     []string  // --var-file paths (flat NAME: value maps)
	Environ      []string  // the environment, os.Environ() form
	VarPrefix    string    // default KHOOK_VAR_
	SecretPrefix string    // default KHOOK_SECRET_
	// Policies are --policy files: rules the spec under review cannot
	// remove (khook rules or admission policies).
	Policies []string
	// RequireVerifiedCharts refuses every helm step with a remote chart and
	// no verify: (--require-verified-charts).
	RequireVerifiedCharts bool
	// Redactor receives every secret value and every pipeline output derived
	// from one, before any error that could quote them is built.
	Redactor *redact.Redactor
	// Decrypt opens a sops-encrypted var file (sops.Open): the plaintext,
	// every value of it registered with r first, and whether data was
	// encrypted (its variables are then secrets). spec does not import the
	// sops library, whose key services (cloud KMS SDKs, gRPC) would be in
	// the graph of everything that reads the DSL. Nil reads a var file as
	// it is, so an encrypted one is refused: its sops: map is no variable.
	Decrypt func(file string, data []byte, r *redact.Redactor) (plain []byte, encrypted bool, err error)
	// StdinDir resolves the relative paths of a spec read from Stdin ("":
	// the working directory); a file's resolve against its own folder.
	StdinDir string
}

// MaxFileSize is the largest spec file Load reads.
const MaxFileSize = 4 << 20

// StdinName is how a spec read from standard input is named in positions.
const StdinName = "<stdin>"

// Load reads, substitutes, parses, merges overlays (overlay.go), evaluates
// when: and validates a spec.
// Invalid input returns Problems (every problem at once, with positions,
// sorted and redacted); other errors (unreadable file) are plain errors.
func Load(opts LoadOptions) (*Spec, error) {
	s, _, err := loadMerged(opts)
	return s, err
}

// readSpecFile reads one spec file (or stdin for "-"), refusing huge ones.
func readSpecFile(file string, stdin io.Reader) (string, []byte, error) {
	var r io.Reader
	name := file
	if file == "-" {
		if stdin == nil {
			return "", nil, errors.New("-f - given but no standard input is available")
		}
		r, name = stdin, StdinName
	} else {
		f, err := os.Open(file)
		if err != nil {
			return "", nil, fmt.Errorf("cannot read spec: %w", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return "", nil, fmt.Errorf("cannot read spec %s: it is a directory, pass a file", file)
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return "", nil, fmt.Errorf("cannot read spec %s: %w", name, err)
	}
	if len(data) > MaxFileSize {
		return "", nil, fmt.Errorf("spec %s is larger than %d MiB; khook refuses files this large (split it, or move big manifests to file: sources)", name, MaxFileSize>>20)
	}
	return name, data, nil
}

// fileTree is one parsed spec file: its YAML tree and position map.
type fileTree struct {
	name string
	root *yaml.Node
	pm   *posMap
	// origin records nodes grafted in from other files, so positions keep
	// the file each node was written in.
	origin map[*yaml.Node]*posMap
}

// graft records that the subtree n (from other) now lives in ft's tree: an
// overlay merge (issue 7) grafts the nodes it takes from an overlay.
func (ft *fileTree) graft(other *fileTree, n *yaml.Node) {
	if ft.origin == nil {
		ft.origin = map[*yaml.Node]*posMap{}
	}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if _, seen := ft.origin[n]; seen {
			return
		}
		m := other.pm
		if o, ok := other.origin[n]; ok {
			m = o
		}
		ft.origin[n] = m
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
}

// parseFile substitutes variables in the raw text and parses the result.
func parseFile(name string, src []byte, vs *varSet, pipes *pipelines) (*fileTree, Problems) {
	out, pm, probs := substitute(name, src, vs, pipes)
	if len(probs) > 0 {
		return nil, probs
	}
	root, probs := parseDocument(out, pm, name)
	if len(probs) > 0 {
		return nil, probs
	}
	return &fileTree{name: name, root: root, pm: pm}, nil
}

// build decodes a parsed tree, applies defaults, evaluates when: and
// validates. It always returns a spec, complete or partial.
func build(ft *fileTree, vs *varSet, red *redact.Redactor) (*Spec, Problems) {
	s := &Spec{Files: []string{ft.name}, Vars: vs.vals, Positions: map[string]Pos{}}
	d := &decoder{pm: ft.pm, origin: ft.origin, pos: s.Positions, bad: map[string]bool{}, typos: map[string]bool{}}
	d.decode(ft.root, nil, "", reflect.ValueOf(s).Elem())
	registerCredentials(s, red)
	probs := d.probs
	applyDefaults(s)
	locateInline(s, ft.maps())
	probs = append(probs, validate(s, d.bad, d.typos)...)
	probs = append(probs, evalWhen(s, ft.pm)...)
	return s, probs
}

// finish redacts, de-duplicates and sorts problems.
func finish(probs Problems, red *redact.Redactor) Problems {
	seen := map[string]bool{}
	out := probs[:0]
	for _, p := range probs {
		p.Message = red.String(p.Message)
		p.Hint = red.String(p.Hint)
		p.Path = red.String(p.Path) // a map key can come from a secret too
		k := p.String()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	out.Sort()
	return out
}
