// Package version is khook's build identity and the version command.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
)

// Set at build time (GoReleaser does, see .goreleaser.yaml):
//
//	go build -ldflags "-X github.com/khook/khook/internal/cli/version.Version=v1.2.3 -X github.com/khook/khook/internal/cli/version.Commit=abc1234 -X github.com/khook/khook/internal/cli/version.Date=2026-01-02T03:04:05Z"
//
// Left empty, they come from the module and VCS data Go embeds in the binary.
var (
	Version string
	Commit  string
	Date    string
)

// The libraries whose versions decide khook's behaviour towards charts and
// clusters; read from the binary's build info, never stamped by hand.
const (
	helmModule     = "helm.sh/helm/v4"
	clientGoModule = "k8s.io/client-go"
)

// Info is what version prints.
type Info struct {
	Version         string `json:"version"`
	Commit          string `json:"commit"`
	BuildDate       string `json:"buildDate"`
	GoVersion       string `json:"goVersion"`
	Platform        string `json:"platform"`
	HelmVersion     string `json:"helmVersion"`
	ClientGoVersion string `json:"clientGoVersion"`
}

// Get returns the build identity: ldflags first, then debug.ReadBuildInfo.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(Version, Commit, Date, bi)
}

// fromBuild merges the stamped values with the build info (nil when the
// binary has none); "unknown" marks what neither provides.
func fromBuild(ver, commit, date string, bi *debug.BuildInfo) Info {
	info := Info{Version: ver, Commit: commit, BuildDate: date,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		if info.Version == "" && bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.Commit == "":
				info.Commit = s.Value
			case s.Key == "vcs.time" && info.BuildDate == "":
				info.BuildDate = s.Value
			}
		}
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil { // a fork or local checkout builds what it says
				v = d.Replace.Version
			}
			switch d.Path {
			case helmModule:
				info.HelmVersion = v
			case clientGoModule:
				info.ClientGoVersion = v
			}
		}
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	for _, f := range []*string{&info.Commit, &info.BuildDate, &info.HelmVersion, &info.ClientGoVersion} {
		if *f == "" {
			*f = "unknown"
		}
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
		Short: "Print khook's version, commit, build date and the Go, Helm and client-go versions it was built with",
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
	return write(opts.F.IOStreams.Out, opts.Output, Get())
}

func write(out io.Writer, format string, info Info) error {
	if format == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(out, info)
	}
	_, err := fmt.Fprintf(out, "khook %s\ncommit: %s\nbuilt: %s\ngo: %s %s\nhelm: %s\nclient-go: %s\n",
		info.Version, info.Commit, info.BuildDate, info.GoVersion, info.Platform, info.HelmVersion, info.ClientGoVersion)
	return err
}
