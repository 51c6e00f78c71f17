package fleet

import (
	"io"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/sops"
	"github.com/khook/khook/spec"
)

// clusterFiles is what khook files lists for a cluster's spec (its files,
// overlays, var files, sets and policy files, as its leg loads it); ok is
// false when the spec does not load here (a secret it requires is not set
// in this job), and --changed-since then keeps the cluster on any shared
// change.
func clusterFiles(f *cmdutil.Factory, fl *spec.Fleet, c *spec.FleetCluster) ([]string, bool) {
	in := fl.Leg(c, spec.LegInputs{})
	varFiles := in.VarFiles
	s, err := spec.Load(spec.LoadOptions{
		Files: in.Files, VarFiles: varFiles, Set: in.Set, Policies: in.Policies, Stdin: io.MultiReader(),
		Environ: f.IOStreams.Environ, VarPrefix: cmdutil.DefaultVarPrefix, SecretPrefix: cmdutil.DefaultSecretPrefix,
		Redactor: redact.New(), Decrypt: sops.Open, // a throwaway redactor: nothing of it is printed
	})
	if err != nil {
		return nil, false
	}
	files, err := command.Files(s, varFiles)
	if err != nil {
		return nil, false
	}
	return files, true
}
