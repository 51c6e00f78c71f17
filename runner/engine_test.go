package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// fakeExec runs per-step behaviours; steps without one succeed at once.
type fakeExec struct {
	mu      sync.Mutex
	fns     map[string]func(ctx context.Context, attempt int) (Outcome, error)
	calls   map[string]int
	started chan string // receives each attempt's step name, if set
}

func newFake() *fakeExec {
	return &fakeExec{fns: map[string]func(context.Context, int) (Outcome, error){}, calls: map[string]int{}}
}

func (f *fakeExec) on(name string, fn func(ctx context.Context, attempt int) (Outcome, error)) *fakeExec {
	f.fns[name] = fn
	return f
}

func (f *fakeExec) Execute(ctx context.Context, st *spec.Step) (Outcome, error) {
	f.mu.Lock()
	f.calls[st.Name]++
	attempt, fn := f.calls[st.Name], f.fns[st.Name]
	f.mu.Unlock()
	if f.started != nil {
		f.started <- st.Name
	}
	if fn == nil {
		return Outcome{Detail: "did " + st.Name}, nil
	}
	return fn(ctx, attempt)
}

// blockUntil returns a behaviour that waits for release (or ctx) and succeeds.
func blockUntil(release <-chan struct{}) func(context.Context, int) (Outcome, error) {
	return func(ctx context.Context, _ int) (Outcome, error) {
		select {
		case <-release:
			return Outcome{Detail: "released"}, nil
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
	}
}

func fail(msg string) func(context.Context, int) (Outcome, error) {
	return func(context.Context, int) (Outcome, error) { return Outcome{}, errors.New(msg) }
}

// fakeClock never waits: After fires at once and records the delay asked for.
type fakeClock struct {
	mu     sync.Mutex
	ticks  int
	delays []time.Duration
}

// Now advances a second per call, so durations are non-zero and exact.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ticks++
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c.ticks) * time.Second)
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.delays = append(c.delays, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

func step(name string, needs ...string) *spec.Step {
	return &spec.Step{Name: name, Needs: needs, Wait: &spec.Wait{}, OnError: spec.OnErrorFail,
		Timeout: spec.Duration(time.Minute), RetryDelay: spec.Duration(10 * time.Second)}
}

func engine(exec Executor, steps ...*spec.Step) *Engine {
	for i, s := range steps {
		s.Index, s.Path = i, fmt.Sprintf("steps.%d", i)
	}
	return &Engine{Steps: steps, Exec: exec, Clock: &fakeClock{}}
}

// brief is the part of a result the tests compare.
type brief struct {
	Name, Status, Error, Skip, Detail string
	Attempts                          int
}

func briefs(rs []model.StepResult) []brief {
	out := make([]brief, len(rs))
	for i, r := range rs {
		out[i] = brief{r.Name, string(r.Status), r.Error, r.SkipReason, r.Detail, r.Attempts}
	}
	return out
}

func check(t *testing.T, got []model.StepResult, want []brief) {
	t.Helper()
	if d := cmp.Diff(want, briefs(got)); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
}

func TestStepStartsAsSoonAsItsNeedsSucceed(t *testing.T) {
	release, cDone := make(chan struct{}), make(chan struct{})
	f := newFake().
		on("a", blockUntil(release)).
		on("c", func(context.Context, int) (Outcome, error) { close(cDone); return Outcome{Detail: "c"}, nil })
	e := engine(f, step("a"), step("b"), step("c", "b"), step("d", "a", "c"))
	go func() { <-cDone; close(release) }() // c must run while a is still running
	got := e.Run(context.Background())
	check(t, got, []brief{
		{"a", "ok", "", "", "released", 1},
		{"b", "ok", "", "", "did b", 1},
		{"c", "ok", "", "", "c", 1},
		{"d", "ok", "", "", "did d", 1},
	})
}

func TestExcludedAndSkippedStepsSatisfyNeeds(t *testing.T) {
	a, b := step("a"), step("b", "a")
	a.Skip, a.When = spec.SkipWhen, `vars.ENV == "prod"`
	f := newFake().on("b", func(context.Context, int) (Outcome, error) {
		return Outcome{Skipped: true, SkipReason: "job/b already succeeded"}, nil
	})
	got := engine(f, a, b, step("c", "b")).Run(context.Background())
	check(t, got, []brief{
		{"a", "skipped", "", `excluded: when vars.ENV == "prod" is false`, "", 0},
		{"b", "skipped", "", "job/b already succeeded", "", 1},
		{"c", "ok", "", "", "did c", 1},
	})
	if got[0].Skip != spec.SkipWhen || got[1].Skip.Excluded() {
		t.Errorf("Skip = %q, %q; want when, none", got[0].Skip, got[1].Skip)
	}
	if f.calls["a"] != 0 {
		t.Errorf("the excluded step ran %d times", f.calls["a"])
	}
}

func TestOnErrorFailLetsRunningStepsFinishAndStartsNothing(t *testing.T) {
	release := make(chan struct{})
	f := newFake().on("slow", blockUntil(release)).on("bad", fail("deployment/x not found"))
	e := engine(f, step("slow"), step("bad"), step("after-slow", "slow"), step("after-bad", "bad"))
	e.OnFinish = func(r model.StepResult) {
		if r.Name == "bad" {
			close(release) // slow finishes only once the engine has seen bad fail
		}
	}
	got := e.Run(context.Background())
	check(t, got, []brief{
		{"slow", "ok", "", "", "released", 1},
		{"bad", "failed", "deployment/x not found", "", "", 1},
		{"after-slow", "skipped", "", "not run: step bad failed", "", 0},
		{"after-bad", "skipped", "", "not run: step bad failed", "", 0},
	})
}

func TestOnErrorContinueSkipsOnlyDependents(t *testing.T) {
	bad := step("bad")
	bad.OnError = spec.OnErrorContinue
	f := newFake().on("bad", fail("boom"))
	got := engine(f, bad, step("child", "bad"), step("grandchild", "child"), step("other"), step("after-other", "other")).
		Run(context.Background())
	check(t, got, []brief{
		{"bad", "failed", "boom", "", "", 1},
		{"child", "skipped", "", "needs bad, which failed", "", 0},
		{"grandchild", "skipped", "", "needs child, which did not run (bad failed)", "", 0},
		{"other", "ok", "", "", "did other", 1},
		{"after-other", "ok", "", "", "did after-other", 1},
	})
}

func TestExcludedStepWithFailedNeedStillBlocks(t *testing.T) {
	bad, mid := step("bad"), step("mid", "bad")
	bad.OnError = spec.OnErrorContinue
	mid.Skip, mid.When = spec.SkipWhen, "false"
	got := engine(newFake().on("bad", fail("boom")), bad, mid, step("last", "mid")).Run(context.Background())
	check(t, got, []brief{
		{"bad", "failed", "boom", "", "", 1},
		{"mid", "skipped", "", "excluded: when false is false", "", 0},
		{"last", "skipped", "", "needs mid, which did not run (bad failed)", "", 0},
	})
}

func TestTimeoutBoundsEachAttempt(t *testing.T) {
	plain, wrapped := step("plain"), step("wrapped")
	plain.Timeout = spec.Duration(time.Millisecond)
	wrapped.Timeout = spec.Duration(time.Millisecond)
	waitCtx := func(ctx context.Context, _ int) (Outcome, error) { <-ctx.Done(); return Outcome{}, ctx.Err() }
	f := newFake().on("plain", waitCtx).on("wrapped", func(ctx context.Context, _ int) (Outcome, error) {
		<-ctx.Done()
		return Outcome{}, fmt.Errorf("waiting for pods/web in demo to be Ready: %w", ctx.Err())
	})
	said := step("said")
	said.Timeout = spec.Duration(time.Millisecond)
	f.on("said", func(ctx context.Context, _ int) (Outcome, error) {
		<-ctx.Done()
		return Outcome{}, fmt.Errorf("timed out after 1ms waiting for condition=Ready on pods in demo: %w", ctx.Err())
	})
	got := engine(f, plain, wrapped, said).Run(context.Background())
	check(t, got, []brief{
		{"plain", "failed", "timed out after 1ms", "", "", 1},
		{"wrapped", "failed", "timed out after 1ms: waiting for pods/web in demo to be Ready", "", "", 1},
		{"said", "failed", "timed out after 1ms waiting for condition=Ready on pods in demo: context deadline exceeded", "", "", 1},
	})
}

func TestRetriesAfterDelayThenSucceeds(t *testing.T) {
	s := step("flaky")
	s.Retries, s.RetryDelay = 2, spec.Duration(30*time.Second)
	f := newFake().on("flaky", func(_ context.Context, attempt int) (Outcome, error) {
		if attempt < 3 {
			return Outcome{}, fmt.Errorf("attempt %d: not yet", attempt)
		}
		return Outcome{Detail: "done"}, nil
	})
	e := engine(f, s)
	var events []model.Event
	e.Emit = func(ev model.Event) { events = append(events, ev) }
	got := e.Run(context.Background())
	check(t, got, []brief{{"flaky", "ok", "", "", "done", 3}})
	if d := cmp.Diff([]time.Duration{30 * time.Second, 30 * time.Second}, e.Clock.(*fakeClock).delays); d != "" {
		t.Errorf("retry delays (-want +got):\n%s", d)
	}
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, fmt.Sprintf("%s %d %s", ev.Kind, ev.Attempt, ev.Message))
	}
	want := []string{
		"started 1 ",
		"retrying 1 attempt 1 of 3 failed, retrying in 30s: attempt 1: not yet",
		"started 2 ",
		"retrying 2 attempt 2 of 3 failed, retrying in 30s: attempt 2: not yet",
		"started 3 ",
		"finished 3 ",
	}
	if d := cmp.Diff(want, kinds); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestRetriesExhausted(t *testing.T) {
	s := step("never")
	s.Retries = 1
	f := newFake().on("never", func(_ context.Context, attempt int) (Outcome, error) {
		return Outcome{LogTail: []string{"line"}}, fmt.Errorf("try %d failed", attempt)
	})
	got := engine(f, s).Run(context.Background())
	check(t, got, []brief{{"never", "failed", "try 2 failed", "", "", 2}})
	if d := cmp.Diff([]string{"line"}, got[0].LogTail); d != "" {
		t.Errorf("LogTail (-want +got):\n%s", d)
	}
}

func TestCancellationStopsSchedulingAndCancelsRunningSteps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake().on("long", func(ctx context.Context, _ int) (Outcome, error) {
		cancel() // the user presses Ctrl-C while this step runs
		<-ctx.Done()
		return Outcome{}, ctx.Err()
	})
	e := engine(f, step("long"), step("next", "long"), step("later", "next"))
	got := e.Run(ctx)
	check(t, got, []brief{
		{"long", "failed", errCancelled, "", "", 1},
		{"next", "skipped", "", "not run: the run was cancelled", "", 0},
		{"later", "skipped", "", "not run: the run was cancelled", "", 0},
	})
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := newFake()
	got := engine(f, step("a"), step("b", "a")).Run(ctx)
	check(t, got, []brief{
		{"a", "skipped", "", "not run: the run was cancelled", "", 0},
		{"b", "skipped", "", "not run: the run was cancelled", "", 0},
	})
}

func TestParallelismBoundsRunningSteps(t *testing.T) {
	release := make(chan struct{})
	var now, peak atomic.Int32
	body := func(ctx context.Context, _ int) (Outcome, error) {
		n := now.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		defer now.Add(-1)
		return blockUntil(release)(ctx, 0)
	}
	f := newFake().on("a", body).on("b", body).on("c", body)
	f.started = make(chan string)
	e := engine(f, step("a"), step("b"), step("c"))
	e.Parallelism = 2
	go func() {
		<-f.started
		<-f.started
		close(release) // every step may finish now; c starts only when a slot frees
		<-f.started
	}()
	e.Run(context.Background())
	if p := peak.Load(); p > 2 {
		t.Errorf("%d steps ran at once with Parallelism 2", p)
	}
}

func TestResumeHookSkipsAsSuccess(t *testing.T) {
	a, b := step("a"), step("b", "a")
	f := newFake()
	e := engine(f, a, b)
	var asked []string
	e.Resume = func(s *spec.Step) (string, bool) {
		asked = append(asked, s.Name)
		return "unchanged since it succeeded in a previous run (state record)", s.Name == "a"
	}
	got := e.Run(context.Background())
	check(t, got, []brief{
		{"a", "skipped", "", "unchanged since it succeeded in a previous run (state record)", "", 0},
		{"b", "ok", "", "", "did b", 1},
	})
	if d := cmp.Diff([]string{"a", "b"}, asked); d != "" {
		t.Errorf("Resume asked (-want +got):\n%s", d)
	}
}

func TestSecretsAreMaskedBeforeTheyAreStoredOrEmitted(t *testing.T) {
	r := redact.New()
	r.Add("hunter2")
	s := step("leaky")
	s.Retries = 1
	f := newFake().on("leaky", func(context.Context, int) (Outcome, error) {
		return Outcome{Detail: "ns hunter2", LogTail: []string{"password=hunter2"}}, errors.New(`namespace "hunter2" is invalid`)
	})
	e := engine(f, s)
	e.Redactor = r
	var msgs []string
	e.Emit = func(ev model.Event) { msgs = append(msgs, fmt.Sprintf("%s %+v", ev.Message, ev.Result)) }
	var journal []model.StepResult
	e.OnFinish = func(res model.StepResult) { journal = append(journal, res) }
	got := e.Run(context.Background())
	check(t, got, []brief{{"leaky", "failed", `namespace "***" is invalid`, "", "ns ***", 2}})
	if d := cmp.Diff([]string{"password=***"}, got[0].LogTail); d != "" {
		t.Errorf("LogTail (-want +got):\n%s", d)
	}
	if d := cmp.Diff(got, journal); d != "" {
		t.Errorf("OnFinish (-want +got):\n%s", d)
	}
	for _, m := range msgs {
		if strings.Contains(m, "hunter2") {
			t.Errorf("event leaks the secret: %s", m)
		}
	}
}

func TestExecutorPanicFailsTheStep(t *testing.T) {
	f := newFake().on("p", func(context.Context, int) (Outcome, error) { panic("nil map") })
	got := engine(f, step("p")).Run(context.Background())
	check(t, got, []brief{{"p", "failed", "internal error in the wait executor (please report it): nil map", "", "", 1}})
}

func TestBadGraphsNeverHang(t *testing.T) {
	got := engine(newFake(), step("x", "y"), step("y", "x"), step("z", "ghost")).Run(context.Background())
	check(t, got, []brief{
		{"x", "skipped", "", reasonCycle, "", 0},
		{"y", "skipped", "", reasonCycle, "", 0},
		{"z", "skipped", "", "needs ghost, which is not a step of this spec", "", 0},
	})
}

func TestResultsCarryStepFields(t *testing.T) {
	s := step("a")
	e := engine(newFake(), s, step("b", "a"))
	e.PosOf = func(path string) spec.Pos { return spec.Pos{File: "k.yaml", Line: 10 + len(path)} }
	var finished []string
	e.OnFinish = func(r model.StepResult) { finished = append(finished, r.Name) }
	got := e.Run(context.Background())
	want := []model.StepResult{
		{Name: "a", Type: "wait", Status: model.StatusOK, Attempts: 1, Detail: "did a", Pos: spec.Pos{File: "k.yaml", Line: 17}},
		{Name: "b", Type: "wait", Status: model.StatusOK, Attempts: 1, Detail: "did b", Needs: []string{"a"}, Pos: spec.Pos{File: "k.yaml", Line: 17}},
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(model.StepResult{}, "DurationMs")); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"a", "b"}, finished); d != "" {
		t.Errorf("OnFinish order (-want +got):\n%s", d)
	}
}

func TestDurationCoversEveryAttempt(t *testing.T) {
	s := step("slow")
	s.Retries = 1
	e := engine(newFake().on("slow", fail("no")), s)
	clock := &fakeClock{}
	e.Clock = clock
	got := e.Run(context.Background())
	// The fake clock moves a second per reading: start and end differ.
	if got[0].DurationMs <= 0 {
		t.Errorf("DurationMs = %d; want the time from the first attempt to the last", got[0].DurationMs)
	}
}
