// Package importcmd is `khook import`: a khook spec from another tool's
// file. `khook import helmfile FILE` converts a helmfile.yaml's common
// subset (helmfile.go) and lists, with its line, everything it did not.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package importcmd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/spec"
)

// Options of `khook import helmfile`.
type Options struct {
	F    *cmdutil.Factory
	File string
	Out  string // "" or "-": stdout
	Name string // metadata.name; "" is the helmfile's directory name
}

// NewCmd builds `khook import` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Write a khook spec from another tool's file (helmfile)",
		Args:  cmdutil.NoArgs,
	}
	cmd.AddCommand(newHelmfileCmd(f))
	return cmd
}

func newHelmfileCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "helmfile FILE",
		Short: "Convert a helmfile.yaml into a khook spec and list what it could not convert",
		Long: `Convert a helmfile.yaml's common subset into a khook spec: repositories,
helmDefaults (wait, atomic, timeout, createNamespace) and releases with chart,
version, namespace, values (files and inline), set, needs, installed (false
becomes a delete of the release), wait, atomic, timeout and createNamespace.
Every other construct is listed on stderr as FILE:LINE: what: why, and in the
spec's header comment. Chart paths and values files are written as the
helmfile has them: write the spec next to the helmfile. A templated helmfile
is rendered first (helmfile build > rendered.yaml).`,
		Example: `  khook import helmfile helmfile.yaml > khook.yaml
  khook import helmfile helmfile.yaml --out khook.yaml && khook validate -f khook.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.FlagErrorf("%s takes one helmfile, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return RunHelmfile(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the spec to `FILE` instead of stdout")
	cmd.Flags().StringVar(&opts.Name, "name", "", "metadata.name of the spec (default: the helmfile's directory name)")
	return cmd
}

// RunHelmfile converts opts.File.
func RunHelmfile(opts *Options) error {
	data, err := os.ReadFile(opts.File)
	if err != nil {
		return fmt.Errorf("cannot read the helmfile: %w", err)
	}
	name := opts.Name
	if name == "" {
		abs, _ := filepath.Abs(opts.File)
		name = SpecName(abs)
	}
	conv, err := ConvertHelmfile(data, name)
	if err != nil {
		return fmt.Errorf("%s%s", atLine(opts.File, err), err)
	}
	doc, err := checked(conv, opts.File)
	if err != nil {
		return err
	}
	for _, u := range conv.Unconverted {
		fmt.Fprintf(opts.F.IOStreams.ErrOut, "%s:%d: %s: not converted: %s\n", opts.File, u.Line, u.What, u.Why)
	}
	fmt.Fprintf(opts.F.IOStreams.ErrOut, "%d releases converted into steps; %d constructs not converted\n",
		len(conv.Spec.Steps), len(conv.Unconverted))
	if opts.Out == "" || opts.Out == "-" {
		_, err = opts.F.IOStreams.Out.Write(doc)
		return err
	}
	if err := os.WriteFile(opts.Out, doc, 0o644); err != nil {
		return fmt.Errorf("cannot write the spec: %w", err)
	}
	return nil
}

// yamlLine finds the line in the YAML parser's "yaml: line N: ...".
var yamlLine = regexp.MustCompile(`^cannot read it as YAML \(yaml: line ([0-9]+):`)

// atLine is "FILE:LINE: " for an error that names a line of the helmfile,
// else "FILE: ".
func atLine(file string, err error) string {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return file + ":" + m[1] + ": "
	}
	return file + ": "
}

// render is the spec as the importer writes it: a header comment that lists
// what was not converted, then the spec.
func render(conv *Converted, file string) ([]byte, error) {
	var body bytes.Buffer
	enc := yaml.NewEncoder(&body)
	enc.SetIndent(2)
	if err := enc.Encode(conv.Spec); err != nil {
		return nil, fmt.Errorf("cannot encode the spec: %w", err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# Converted from %s by khook import helmfile.\n", filepath.Base(file))
	if n := len(conv.Unconverted); n > 0 {
		fmt.Fprintf(&out, "# Not converted (%d):\n", n)
		for _, u := range conv.Unconverted {
			fmt.Fprintf(&out, "#   %s\n", u)
		}
	}
	out.Write(body.Bytes())
	return out.Bytes(), nil
}

// checked renders the spec and loads it as validate does: a release whose
// step the spec refuses (a chart URL with an unexpanded $PORT, a namespace
// that is no DNS label, a need of such a release) is not converted, with
// its line and the spec's reason, so what the importer writes always
// validates. With no release left, the import is refused at a line.
func checked(conv *Converted, file string) ([]byte, error) {
	for {
		if len(conv.Spec.Steps) == 0 {
			line, why := 1, "the helmfile has no releases"
			for i, u := range conv.Unconverted {
				// The first release not converted says why; else whatever was not.
				if i == 0 || strings.HasPrefix(u.What, "release ") || strings.HasPrefix(u.What, "a release") {
					line, why = u.Line, u.What+": "+u.Why
					if i > 0 || strings.Contains(why, "release") {
						break
					}
				}
			}
			return nil, fmt.Errorf("%s:%d: no release could be converted (first: %s); nothing to write", file, line, why)
		}
		doc, err := render(conv, file)
		if err != nil {
			return nil, err
		}
		_, err = spec.Load(spec.LoadOptions{Files: []string{"-"}, Stdin: bytes.NewReader(doc)})
		var probs spec.Problems
		if err == nil {
			return doc, nil
		}
		if !errors.As(err, &probs) {
			return nil, fmt.Errorf("%s: cannot check the converted spec: %w", file, err)
		}
		refused := map[int]string{}
		for _, p := range probs {
			var i int
			if _, err := fmt.Sscanf(p.Path, "steps.%d", &i); err == nil && i < len(conv.Spec.Steps) && refused[i] == "" {
				refused[i] = p.Message
			}
		}
		if len(refused) == 0 {
			return nil, fmt.Errorf("%s:1: the converted spec is invalid: %s", file, probs[0])
		}
		var steps []*outStep
		var lines []int
		for i, st := range conv.Spec.Steps {
			if why, ok := refused[i]; ok {
				conv.Unconverted = append(conv.Unconverted, Unconverted{Line: conv.Lines[i], What: "release " + st.Name, Why: "the spec refuses it: " + why})
				continue
			}
			steps, lines = append(steps, st), append(lines, conv.Lines[i])
		}
		conv.Spec.Steps, conv.Lines = steps, lines
		sort.SliceStable(conv.Unconverted, func(i, j int) bool { return conv.Unconverted[i].Line < conv.Unconverted[j].Line })
	}
}
