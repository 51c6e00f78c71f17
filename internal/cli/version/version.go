// Package version is khook's build identity and the version command.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
)

// Set at build time:
//
//	go build -ldflags "-X github.com/khook/khook/internal/cli/version.Version=v1.2.3 -X github.com/khook/khook/internal/cli/version.Commit=abc1234"
//
// Left empty, they come from the module and VCS data Go embeds in the binary.
var (
	Version string
	Commit  string
)

// Info is what version prints.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build identity: ldflags first, then debug.ReadBuildInfo.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					info.Commit = s.Value
				}
			}
		}
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// Options of the version command.
type Options struct {
	F      *cmdutil.Factory
	Output string
}

// NewCmd builds `khook version`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print khook's version, commit and Go version",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(opts.Output, cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			return Run(opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// Run prints the build identity.
func Run(opts *Options) error {
	info := Get()
	out := opts.F.IOStreams.Out
	if opts.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(out, info)
	}
	_, err := fmt.Fprintf(out, "khook %s\ncommit: %s\ngo: %s %s\n", info.Version, info.Commit, info.GoVersion, info.Platform)
	return err
}
