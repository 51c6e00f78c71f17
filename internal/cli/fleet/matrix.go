package fleet

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	ifleet "github.com/khook/khook/internal/fleet"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Matrix output formats.
const (
	MatrixGitHub = "github"
	MatrixGitLab = "gitlab"
)

// MatrixOptions of `khook fleet matrix`.
type MatrixOptions struct {
	F        *cmdutil.Factory
	Fleet    string
	Wave     int
	Selector string
	Output   string
	// Chunk picks one of the matrices a selection over GitHub's 256 jobs
	// splits into (1-based; 0 prints every chunk, one per line).
	Chunk int
	// Command and Image shape the GitLab child pipeline.
	Command string
	Image   string
	// ChangedSince keeps the clusters the changes since this git ref touch.
	ChangedSince string
}

// newMatrixCmd builds `khook fleet matrix`.
func newMatrixCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &MatrixOptions{F: f}
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Print the CI matrix of a fleet's clusters (GitHub JSON, GitLab child pipeline)",
		Long: `Print the matrix of the selected clusters. -o github (default): one line
{"include":[{"cluster":...,"wave":...,"kubeconfigSecret":...}]} for
$GITHUB_OUTPUT and fromJSON. A selection over GitHub's 256 jobs per matrix
is split into chunks: khook says so on stderr and prints each chunk on its
own line; --chunk N prints chunk N only. -o gitlab: a child pipeline with a
stage per wave (a parallel:matrix job per 200 clusters, resource_group per
cluster), a gate per wave that stops the rollout past rollout.maxFailures,
and one report job; it never uses needs: (GitLab allows 50).`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(opts.Output, MatrixGitHub, MatrixGitLab); err != nil {
				return err
			}
			if opts.Fleet == "" {
				return cmdutil.FlagErrorf("-f/--fleet names the fleet file")
			}
			if opts.Wave < 0 || opts.Chunk < 0 {
				return cmdutil.FlagErrorf("--wave and --chunk count from 1")
			}
			return RunMatrix(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.Fleet, "fleet", "f", "", "the fleet file (kind: Fleet)")
	fs.IntVar(&opts.Wave, "wave", 0, "only the clusters of this wave (default every wave)")
	fs.StringVar(&opts.Selector, "selector", "", "only the clusters whose labels match: env=prod,region!=us")
	fs.StringVarP(&opts.Output, "output", "o", MatrixGitHub, "github (matrix JSON on one line) or gitlab (child pipeline YAML)")
	fs.IntVar(&opts.Chunk, "chunk", 0, "-o github over 256 clusters: print only chunk N (from 1)")
	fs.StringVar(&opts.Command, "command", "plan", "-o gitlab: the legs' command (plan, apply or drift)")
	fs.StringVar(&opts.ChangedSince, "changed-since", "", "only the clusters a change since this git `REF` touches: the fleet file or a file the cluster's spec reads (khook files)")
	fs.StringVar(&opts.Image, "image", "", "-o gitlab: the job image (default the GitLab image of this khook's version)")
	return cmd
}

// RunMatrix prints the matrix.
func RunMatrix(opts *MatrixOptions) error {
	fl, err := opts.F.LoadFleet(opts.Fleet)
	if err != nil {
		return err
	}
	clusters, err := ifleet.Selection(fl, opts.Wave, opts.Selector)
	if err != nil {
		return cmdutil.ValidationError(err)
	}
	if opts.ChangedSince != "" {
		changed, err := ifleet.ChangedFiles("", opts.ChangedSince, "")
		if err != nil {
			return fmt.Errorf("--changed-since %s: %w", opts.ChangedSince, err)
		}
		clusters = ifleet.Touched(fl, clusters, changed, func(c *spec.FleetCluster) ([]string, bool) {
			return clusterFiles(opts.F, fl, c)
		})
	}
	legs := ifleet.Legs(clusters)
	out, errOut := opts.F.IOStreams.Out, opts.F.IOStreams.ErrOut
	if opts.Output == MatrixGitLab {
		switch opts.Command {
		case "plan", "apply", "drift":
		default:
			return cmdutil.FlagErrorf("--command %q: use plan, apply or drift", opts.Command)
		}
		image := opts.Image
		if image == "" {
			image = DefaultGitLabImage(opts.F.Version)
		}
		if n := len(legs); n > ifleet.GitLabMaxJobs {
			fmt.Fprintf(errOut, "%d clusters exceed GitLab's %d parallel:matrix jobs per job: each wave's legs are split into jobs of at most %d (wave-N-part-M).\n", n, ifleet.GitLabMaxJobs, ifleet.GitLabMaxJobs)
		}
		_, err := io.WriteString(out, ifleet.GitLabPipeline(legs, ifleet.GitLabOptions{Fleet: opts.Fleet, Command: opts.Command, Image: image}))
		return err
	}
	chunks := ifleet.Chunks(legs, ifleet.GitHubMaxJobs)
	if opts.Chunk > len(chunks) {
		return cmdutil.FlagErrorf("--chunk %d: the selection has %d clusters, %d %s of at most %d", opts.Chunk, len(legs), len(chunks), words.Plural(len(chunks), "chunk", "chunks"), ifleet.GitHubMaxJobs)
	}
	if opts.Chunk > 0 {
		chunks = chunks[opts.Chunk-1 : opts.Chunk]
	} else if len(chunks) > 1 {
		fmt.Fprintf(errOut, "%d clusters exceed GitHub's %d jobs per matrix: printing %d chunks, one per line; give each its own matrix job with --chunk N (see examples/github/fleet.yml).\n", len(legs), ifleet.GitHubMaxJobs, len(chunks))
	}
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(ifleet.GitHubMatrix(c) + "\n")
	}
	_, err = io.WriteString(out, b.String())
	return err
}

// DefaultGitLabImage is the GitLab job image of a khook version.
func DefaultGitLabImage(version string) string {
	if strings.HasPrefix(version, "v") {
		return "ghcr.io/khook/khook:" + version + "-gitlab"
	}
	return "ghcr.io/khook/khook:latest-gitlab"
}
