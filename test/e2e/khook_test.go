package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
)

// invocation is one run of the khook binary.
type invocation struct {
	Args    []string
	Env     []string // added to a minimal environment
	Dir     string   // working directory; default: the test's temp dir
	Timeout time.Duration
	// Kubeconfig overrides the cluster's (the counting proxy's, say).
	Kubeconfig string
}

// outcome is what a run printed and how it exited.
type outcome struct {
	Stdout, Stderr string
	Code           int
	Results        *model.Results // parsed stdout when -o json was passed
}

// khook runs the binary with the cluster's kubeconfig and a minimal
// environment, and fails the test if it cannot run at all.
func khook(t testing.TB, inv invocation) outcome {
	t.Helper()
	cmd, stdout, stderr := command(t, inv)
	err := cmd.Run()
	return finish(t, inv, cmd, stdout, stderr, err)
}

func command(t testing.TB, inv invocation) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	if inv.Timeout == 0 {
		inv.Timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), inv.Timeout)
	t.Cleanup(cancel)
	kubeconfig := inv.Kubeconfig
	if kubeconfig == "" {
		kubeconfig = kc.Kubeconfig
	}
	cmd := exec.CommandContext(ctx, khookBin, append(inv.Args, "--kubeconfig", kubeconfig)...)
	cmd.Dir = inv.Dir
	if cmd.Dir == "" {
		cmd.Dir = t.TempDir()
	}
	home := t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1", "TERM=dumb"}, inv.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// finish reads what a run printed once it has ended (stdout and stderr:
// the buffers command made, or an awaitline.Output).
func finish(t testing.TB, inv invocation, cmd *exec.Cmd, stdout, stderr fmt.Stringer, err error) outcome {
	t.Helper()
	out := outcome{Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		out.Code = exit.ExitCode()
	case err != nil:
		t.Fatalf("cannot run khook %s: %v\nstderr:\n%s", strings.Join(inv.Args, " "), err, out.Stderr)
	}
	if hasJSON(inv.Args) && strings.TrimSpace(out.Stdout) != "" {
		out.Results = &model.Results{}
		if err := json.Unmarshal([]byte(out.Stdout), out.Results); err != nil {
			t.Fatalf("khook %s: stdout is not a results document: %v\nstdout:\n%s\nstderr:\n%s",
				strings.Join(inv.Args, " "), err, out.Stdout, out.Stderr)
		}
	}
	return out
}

func hasJSON(args []string) bool {
	for i, a := range args {
		if a == "-ojson" || a == "--output=json" || ((a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == "json") {
			return true
		}
	}
	return false
}

// applySpec runs `khook apply -o json` on a spec with --set NAME=value pairs.
func applySpec(t *testing.T, file string, sets ...string) outcome {
	t.Helper()
	args := []string{"apply", "-f", file, "-o", "json"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return khook(t, invocation{Args: args})
}

// want is the expected outcome of one step. Error and Skip are substrings
// of what khook reported; MinAttempts > 0 accepts that many or more.
type want struct {
	Name        string
	Status      model.Status
	Attempts    int
	MinAttempts int
	Error       string
	Skip        string
}

// expectSteps compares a run's step results with wants (every step, in spec
// order) and prints the run's output when they differ.
func expectSteps(t *testing.T, out outcome, wants []want) {
	t.Helper()
	if out.Results == nil {
		t.Fatalf("no results document\nstdout:\n%s\nstderr:\n%s", out.Stdout, out.Stderr)
	}
	got := make([]want, len(out.Results.Steps))
	for i, s := range out.Results.Steps {
		g := want{Name: s.Name, Status: s.Status, Attempts: s.Attempts, Error: s.Error, Skip: s.SkipReason}
		if i < len(wants) {
			w := wants[i]
			if w.MinAttempts > 0 && s.Attempts >= w.MinAttempts {
				g.Attempts, g.MinAttempts = 0, w.MinAttempts
			}
			if w.Error != "" && strings.Contains(s.Error, w.Error) {
				g.Error = w.Error
			}
			if w.Skip != "" && strings.Contains(s.SkipReason, w.Skip) {
				g.Skip = w.Skip
			}
		}
		got[i] = g
	}
	if d := cmp.Diff(wants, got); d != "" {
		t.Errorf("step results (-want +got):\n%s\nstderr:\n%s", d, out.Stderr)
	}
}

// namespace is a fresh namespace for t, plus names derived from it that
// the spec creates itself (deleted at the end too).
func namespace(t *testing.T, derived ...string) string {
	t.Helper()
	ns := kc.Namespace(t)
	t.Cleanup(func() {
		for _, suffix := range derived {
			_ = kc.Client.CoreV1().Namespaces().Delete(context.Background(), ns+suffix, metav1.DeleteOptions{})
		}
	})
	return ns
}

func testdata(parts ...string) string {
	return filepath.Join(append([]string{repoRoot, "test", "e2e", "testdata"}, parts...)...)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// khookB runs khook in a benchmark and stops it if the run did not succeed.
func khookB(b *testing.B, args ...string) outcome {
	b.Helper()
	out := khook(b, invocation{Args: args})
	if out.Code != 0 || out.Results == nil {
		b.Fatalf("khook %v: exit %d\nstderr:\n%s", args, out.Code, out.Stderr)
	}
	return out
}
