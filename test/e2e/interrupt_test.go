package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/khook/khook/model"
)

// interruptDeadline bounds the exit after SIGINT: the step would wait its
// 5m timeout otherwise. A hang guard, not a speed (on a loaded machine the
// summary alone can take seconds); how fast khook stops is not a test's to
// assert.
const interruptDeadline = time.Minute

// TestInterruptCancelsRunningStepsAndReportsTheRest: SIGINT while a step
// waits makes khook cancel it, skip what has not run, print the summary and
// exit 1, without waiting out the step's timeout.
func TestInterruptCancelsRunningStepsAndReportsTheRest(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			ns := namespace(t)
			args := []string{"apply", "-f", testdata("interrupt.yaml"), "--set", "NS=" + ns}
			if format == "json" {
				args = append(args, "-o", "json")
			}
			inv := invocation{Args: args}
			cmd, stdout, _ := command(t, inv)
			// Progress lines go to stderr with -o json, to stdout otherwise.
			var progress io.Reader
			var err error
			if format == "json" {
				cmd.Stderr = nil
				progress, err = cmd.StderrPipe()
			} else {
				cmd.Stdout = nil
				progress, err = cmd.StdoutPipe()
			}
			must(t, err)
			must(t, cmd.Start())

			var seen strings.Builder
			waiting := make(chan struct{})
			copied := make(chan struct{})
			go func() {
				defer close(copied)
				sc := bufio.NewScanner(progress)
				signalled := false
				for sc.Scan() {
					seen.WriteString(sc.Text() + "\n")
					// The wait's own line naming the pod it awaits: "running"
					// comes before the step has reached its wait.
					if !signalled && strings.Contains(sc.Text(), "step long: waiting: ") && strings.Contains(sc.Text(), "pod/sleepy") {
						signalled = true
						close(waiting)
					}
				}
				_, _ = io.Copy(io.Discard, progress)
			}()
			select {
			case <-waiting:
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				<-copied
				t.Fatalf("step long never said it was waiting for pod/sleepy; output:\n%s", seen.String())
			}

			sent := time.Now()
			must(t, cmd.Process.Signal(syscall.SIGINT))
			<-copied
			err = cmd.Wait()
			took := time.Since(sent)
			t.Logf("exited %s after SIGINT", took.Round(time.Millisecond))
			if took > interruptDeadline {
				t.Errorf("khook took %s to exit after SIGINT: it waited on instead of cancelling the step (its timeout is 5m)", took)
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit code %d (%v); want 1", code, err)
			}

			wantLines := []string{"long", "cancelled", "after-long", "not run: the run was cancelled"}
			if format == "json" {
				var res model.Results
				if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
					t.Fatalf("stdout is not a results document: %v\n%s", err, stdout.String())
				}
				if res.Status != model.RunFailed || res.FailureReason != model.ReasonCancelled {
					t.Errorf("run status %s (%s); want failed (cancelled)", res.Status, res.FailureReason)
				}
				expectSteps(t, outcome{Results: &res, Stderr: seen.String()}, []want{
					{Name: "sleepy", Status: ok, Attempts: 1},
					{Name: "long", Status: failed, Attempts: 1, Error: "cancelled"},
					{Name: "after-long", Status: skipped, Skip: "not run: the run was cancelled"},
				})
				return
			}
			// The text summary: the results table and the closing verdict.
			for _, w := range append(wantLines, "STEP", "apply e2e-interrupt: failed") {
				if !strings.Contains(seen.String(), w) {
					t.Errorf("the summary lacks %q:\n%s", w, seen.String())
				}
			}
		})
	}
}
