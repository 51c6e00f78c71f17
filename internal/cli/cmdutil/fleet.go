package cmdutil

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/khook/khook/internal/ci"
	"github.com/khook/khook/spec"
)

// FleetFlags select a fleet's cluster for plan and apply (--fleet, --cluster).
type FleetFlags struct {
	Fleet    string
	Cluster  string
	Selector string
	Parallel int
}

// AddFleetFlags registers --fleet and --cluster on fs; all adds the flags
// of a run over every selected cluster (--selector, --parallel).
func AddFleetFlags(fs *pflag.FlagSet, f *FleetFlags, all bool) {
	fs.StringVar(&f.Fleet, "fleet", "", "a fleet file (kind: Fleet): run one of its clusters with its files, vars and context (--cluster)")
	fs.StringVar(&f.Cluster, "cluster", "", "the fleet's cluster to run (with --fleet)")
	if all {
		fs.StringVar(&f.Selector, "selector", "", "with --fleet and no --cluster: the clusters whose labels match (env=prod,region!=us); otherwise the steps whose labels match this Kubernetes label selector (tier=infra,team!=data; env in (a,b)), and what they need")
		fs.IntVar(&f.Parallel, "parallel", 4, "with --fleet and no --cluster: clusters planned at once")
	}
}

// LoadFleet loads a fleet file; its problems are printed like a spec's
// (file:line:col) and exit 2.
func (f *Factory) LoadFleet(path string) (*spec.Fleet, error) {
	fl, err := spec.LoadFleet(path)
	if err == nil {
		return fl, nil
	}
	var problems spec.Problems
	if errors.As(err, &problems) {
		var b strings.Builder
		WriteProblems(&b, problems)
		fmt.Fprint(f.IOStreams.ErrOut, strings.Replace(b.String(), "spec is invalid:", "fleet is invalid:", 1))
		return nil, ReportedProblems(problems)
	}
	return nil, ValidationError(err)
}

// UseFleetCluster points the spec flags and the global kubeconfig and
// context at one cluster of the fleet: its spec inputs as spec.Fleet.Leg
// puts them before the flags given, its context, and the kubeconfig in the
// variable kubeconfigSecret names when that is set. The returned cleanup removes the kubeconfig file.
func (f *Factory) UseFleetCluster(fl *spec.Fleet, c *spec.FleetCluster, flags *SpecFlags) (cleanup func(), err error) {
	in := fl.Leg(c, spec.LegInputs{VarFiles: flags.VarFiles, Set: flags.Set, Policies: flags.Policies})
	flags.Files, flags.VarFiles, flags.Set, flags.Policies = in.Files, in.VarFiles, in.Set, in.Policies
	if c.Context != "" {
		f.Global.Context = c.Context
	}
	path, cleanup, err := f.FleetKubeconfig(fl, c)
	if path != "" {
		f.Global.Kubeconfig = path
	}
	return cleanup, err
}

// FleetKubeconfig writes the kubeconfig in the variable a cluster's
// kubeconfigSecret names to a private temp file and returns its path ("":
// the cluster has none, or the variable is unset and the cluster has a
// context to use instead) and the function that removes it. Its
// credentials are registered with the redactor first.
func (f *Factory) FleetKubeconfig(fl *spec.Fleet, c *spec.FleetCluster) (path string, cleanup func(), err error) {
	cleanup = func() {}
	if c.KubeconfigSecret == "" {
		return "", cleanup, nil
	}
	content := ""
	for _, kv := range f.IOStreams.Environ {
		if v, ok := strings.CutPrefix(kv, c.KubeconfigSecret+"="); ok {
			content = v
		}
	}
	if content == "" {
		if c.Context == "" && f.Global.Kubeconfig == "" {
			return "", cleanup, fmt.Errorf("cluster %s's kubeconfig is in %s, which is not set: set it to the kubeconfig's content, or give the cluster a context: in %s", c.Name, c.KubeconfigSecret, fl.Path)
		}
		return "", cleanup, nil
	}
	for _, secret := range ci.KubeconfigSecrets([]byte(content)) {
		f.Redactor.Add(secret)
	}
	tmp, err := os.CreateTemp("", "khook-kubeconfig-*")
	if err != nil {
		return "", cleanup, fmt.Errorf("cannot write cluster %s's kubeconfig: %w", c.Name, err)
	}
	defer tmp.Close()
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.WriteString(content)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", cleanup, fmt.Errorf("cannot write cluster %s's kubeconfig: %w", c.Name, err)
	}
	return tmp.Name(), func() { os.Remove(tmp.Name()) }, nil
}

// UseFleetFlags applies --fleet --cluster to the spec flags and the
// kubeconfig (UseFleetCluster); nothing without --fleet. A command that
// runs one cluster requires --cluster.
func (f *Factory) UseFleetFlags(flags *FleetFlags, specFlags *SpecFlags) (cleanup func(), err error) {
	cleanup = func() {}
	switch {
	case flags.Fleet == "" && flags.Cluster != "":
		return cleanup, FlagErrorf("--cluster needs --fleet: the fleet file that defines the cluster")
	case flags.Fleet == "":
		return cleanup, nil
	case flags.Cluster == "":
		return cleanup, FlagErrorf("--fleet runs one of the fleet's clusters here: add --cluster NAME")
	}
	fl, err := f.LoadFleet(flags.Fleet)
	if err != nil {
		return cleanup, err
	}
	c, err := fl.Cluster(flags.Cluster)
	if err != nil {
		return cleanup, ValidationError(err)
	}
	return f.UseFleetCluster(fl, c, specFlags)
}
