package apply

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

const specYAML = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: demo
steps:
  - name: first
    rollout:
      restart: deployment/a
      namespace: default
  - name: broken
    needs: [first]
    rollout:
      restart: deployment/b
      namespace: default
  - name: after-broken
    needs: [broken]
    rollout:
      restart: deployment/c
      namespace: default
`

// fakeBackend fails the step named broken with an error quoting the secret.
func fakeBackend(ctx context.Context, _ *command.ApplyCommand, s *spec.Spec) (*command.Backend, error) {
	exec := runner.ExecutorFunc(func(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
		if st.Name == "broken" {
			return runner.Outcome{}, errors.New("deployment/b not found (token s3cr3t)")
		}
		return runner.Outcome{Detail: "restarted " + st.Rollout.Restart}, nil
	})
	return &command.Backend{Exec: exec, Server: "https://127.0.0.1:6443"}, nil
}

// run executes apply with the given terminal setup and arguments.
func run(t *testing.T, tty bool, env []string, connect command.BackendFunc, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCtx(t, context.Background(), tty, env, connect, args...)
}

func runCtx(t *testing.T, ctx context.Context, tty bool, env []string, connect command.BackendFunc, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "khook.yaml")
	if err := os.WriteFile(file, []byte(specYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, out, errOut := iostreams.Test("")
	ios.Environ = append([]string{"KHOOK_SECRET_TOKEN=s3cr3t"}, env...)
	ios.SetTTY(tty)
	f := cmdutil.NewFactory(ios)
	cmd := NewCmd(f, connect)
	cmd.SetArgs(append([]string{"-f", file}, args...))
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), cmdutil.CodeOf(err)
}

func TestApplyPiped(t *testing.T) {
	out, _, code := run(t, false, nil, fakeBackend)
	if code != command.ExitFailure {
		t.Errorf("exit code %d, want 1 (a step failed)", code)
	}
	for _, want := range []string{
		"step first: running",
		"step first: ok in ",
		"step broken: failed in ",
		"step after-broken: skipped: ",
		"STEP          TYPE     STATUS   ATTEMPTS  DURATION  DETAIL/ERROR",
		"apply demo: failed (step-failed)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("piped output has ANSI escapes:\n%q", out)
	}
	if strings.Contains(out, "s3cr3t") {
		t.Errorf("secret leaked:\n%s", out)
	}
}

func TestApplyJSON(t *testing.T) {
	out, errOut, code := run(t, false, nil, fakeBackend, "-o", "json")
	if code != command.ExitFailure {
		t.Errorf("exit code %d, want 1", code)
	}
	var res model.Results
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, out)
	}
	if res.Name != "demo" || res.Status != model.RunFailed || res.FailureReason != model.ReasonStepFailed || len(res.Steps) != 3 {
		t.Errorf("results = %+v", res)
	}
	if got := res.Steps[1]; got.Status != model.StatusFailed || got.Attempts != 1 || got.Error != "deployment/b not found (token ***)" {
		t.Errorf("broken step = %+v", got)
	}
	if !strings.Contains(errOut, "step first: running") {
		t.Errorf("progress lines are not on stderr:\n%s", errOut)
	}
	if strings.Contains(out+errOut, "s3cr3t") {
		t.Error("secret leaked")
	}
}

func TestApplyTerminal(t *testing.T) {
	out, _, _ := run(t, true, []string{"TERM=xterm-256color"}, fakeBackend)
	if !strings.Contains(out, "\x1b[3A") {
		t.Errorf("live view does not redraw in place:\n%q", out)
	}
	if !strings.Contains(out, "\x1b[32m") {
		t.Errorf("live view has no colour without NO_COLOR:\n%q", out)
	}
	out, _, _ = run(t, true, []string{"TERM=xterm", "NO_COLOR=1"}, fakeBackend)
	if !strings.Contains(out, "\x1b[3A") || strings.Contains(out, "\x1b[32m") {
		t.Errorf("NO_COLOR: want cursor movement without colour:\n%q", out)
	}
	out, _, _ = run(t, true, []string{"TERM=dumb"}, fakeBackend)
	if strings.Contains(out, "\x1b[") || !strings.Contains(out, "step first: running") {
		t.Errorf("TERM=dumb: want the piped output, no escapes:\n%q", out)
	}
}

// A live view taller than the terminal cannot move back over itself: the
// piped output is used instead.
func TestApplyTerminalTooShort(t *testing.T) {
	ios, _, _ := iostreams.Test("")
	ios.Environ = []string{"TERM=xterm"}
	ios.SetTTY(true)
	ios.SetSize(80, 3) // three steps need four rows
	f := cmdutil.NewFactory(ios)
	if _, ok := f.ProgressView(cmdutil.OutputText, make([]report.StepInfo, 3)).(*report.LogView); !ok {
		t.Errorf("3 steps on a 3-row terminal: want the piped view")
	}
	if _, ok := f.ProgressView(cmdutil.OutputText, make([]report.StepInfo, 2)).(*report.FrameView); !ok {
		t.Errorf("2 steps on a 3-row terminal: want the live view")
	}
}

func TestApplyUnreachable(t *testing.T) {
	unreachable := func(context.Context, *command.ApplyCommand, *spec.Spec) (*command.Backend, error) {
		return nil, &kube.UnreachableError{Msg: "cannot reach https://admin:s3cr3t@10.0.0.1:6443: connection refused"}
	}
	out, errOut, code := run(t, false, nil, unreachable, "-o", "json")
	if code != command.ExitFailure {
		t.Errorf("exit code %d, want 1", code)
	}
	var res model.Results
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if res.FailureReason != model.ReasonClusterUnreachable || !strings.Contains(res.Error, "connection refused") {
		t.Errorf("results = %+v", res)
	}
	if strings.Contains(out+errOut, "s3cr3t") {
		t.Error("secret leaked")
	}
}

func TestApplyUnreadableKubeconfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "khook.yaml")
	if err := os.WriteFile(file, []byte(specYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, out, errOut := iostreams.Test("")
	f := cmdutil.NewFactory(ios)
	f.Global.Kubeconfig = filepath.Join(dir, "no-such-kubeconfig")
	cmd := NewCmd(f, nil)
	cmd.SetArgs([]string{"-f", file, "-o", "json"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if code := cmdutil.CodeOf(cmd.ExecuteContext(context.Background())); code != command.ExitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	var res model.Results
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if res.FailureReason != model.ReasonClusterUnreachable || !strings.Contains(res.Error, "no-such-kubeconfig") {
		t.Errorf("results = %+v; stderr %s", res, errOut)
	}
}

// Ctrl-C during a run: nothing new starts, the running step sees the
// cancellation, the results still come out, exit 1.
func TestApplyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := func(context.Context, *command.ApplyCommand, *spec.Spec) (*command.Backend, error) {
		exec := runner.ExecutorFunc(func(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
			cancel() // the signal arrives while the first step runs
			<-ctx.Done()
			return runner.Outcome{}, ctx.Err()
		})
		return &command.Backend{Exec: exec}, nil
	}
	out, _, code := runCtx(t, ctx, false, nil, interrupted, "-o", "json")
	if code != command.ExitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	var res model.Results
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if res.FailureReason != model.ReasonCancelled || res.Steps[0].Status != model.StatusFailed || res.Steps[1].Status != model.StatusSkipped {
		t.Errorf("results = %+v", res)
	}
}
