package cmdutil

import (
	"github.com/spf13/pflag"

	"github.com/khook/khook/model"
)

// SelectFlags pick the steps of a partial run (runner/selection).
type SelectFlags struct {
	Targets    []string
	TargetOnly bool
	Selector   string
	Exclude    []string
}

// AddSelectFlags registers --target, --target-only, --selector and
// --exclude; closure says which way a target's closure runs, for the help.
// plan registers no --selector here: its fleet flags' --selector picks
// clusters with --fleet and no --cluster, steps otherwise (plan.go).
func AddSelectFlags(fs *pflag.FlagSet, f *SelectFlags, closure string) {
	addSelectFlags(fs, f, closure)
	fs.StringVar(&f.Selector, "selector", "", "run only the steps whose labels match this Kubernetes label selector (tier=infra,team!=data; env in (a,b)), and "+closure)
}

// AddSelectFlagsNoSelector is AddSelectFlags but --selector, which the
// caller registers.
func AddSelectFlagsNoSelector(fs *pflag.FlagSet, f *SelectFlags, closure string) {
	addSelectFlags(fs, f, closure)
}

func addSelectFlags(fs *pflag.FlagSet, f *SelectFlags, closure string) {
	fs.StringArrayVar(&f.Targets, "target", nil, "run only this step and "+closure+" (repeatable)")
	fs.BoolVar(&f.TargetOnly, "target-only", false, "run only the steps --target and --selector name, not "+closure+" (refused unless the state record shows that part done)")
	fs.StringArrayVar(&f.Exclude, "exclude", nil, "leave this step out (repeatable)")
}

// Selection is the flags' selection request; nil when they ask for nothing.
func (f *SelectFlags) Selection() *model.Selection {
	sel := &model.Selection{Targets: f.Targets, TargetOnly: f.TargetOnly, Selector: f.Selector, Exclude: f.Exclude}
	if !sel.Requested() {
		return nil
	}
	return sel
}
