package runner

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// Skip reasons the engine reports (semantics.md, "Scheduling").
const (
	reasonCancelled = "not run: the run was cancelled"
	reasonCycle     = "not run: its needs never completed (a cycle in needs)"
)

// Engine runs a spec's steps as a DAG: a step starts the moment every step in
// its needs has succeeded or was skipped as success. It never prints: it
// reports through Emit and OnFinish and returns every step's result.
type Engine struct {
	// Steps in spec order; results come back in the same order.
	Steps []*spec.Step
	// Exec performs one attempt of a step.
	Exec Executor
	// Parallelism bounds how many steps run at once; 0 means unbounded.
	Parallelism int
	// Emit receives progress events, one call at a time. Optional.
	Emit func(model.Event)
	// Resume, when set, is asked before a step whose needs are met would
	// run; skip=true reports the step skipped (as success) with reason.
	// The state record plugs in here.
	Resume func(step *spec.Step) (reason string, skip bool)
	// OnFinish receives each step's final result as soon as it is known,
	// one call at a time (journaling). Optional.
	OnFinish func(model.StepResult)
	// Redactor masks secrets in every error, detail and log line before it
	// is stored or emitted. Nil masks only URL credentials.
	Redactor *redact.Redactor
	// PosOf maps a step's field path to its source position. Optional.
	PosOf func(path string) spec.Pos
	// Clock measures durations and times retry delays; nil is the real clock.
	Clock Clock
	// WarningsAsErrors fails a step that succeeded when the API server
	// warned about any of its requests (--warnings-as-errors).
	WarningsAsErrors bool
}

// Clock is the engine's view of time, replaceable in tests.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ForSpec returns an engine for every step of s, positions included.
func ForSpec(s *spec.Spec, exec Executor) *Engine {
	return &Engine{Steps: s.Steps, Exec: exec, PosOf: s.PosOf}
}

// node is one step's scheduling state.
type node struct {
	step    *spec.Step
	state   nodeState
	result  model.StepResult
	blocked string // for a step that did not succeed: the failed step behind it
}

type nodeState int

const (
	statePending nodeState = iota // needs not settled yet
	stateReady                    // needs met, waiting for a slot
	stateRunning
	stateDone
)

// finished is a worker's report to the scheduling loop.
type finished struct {
	i      int
	result model.StepResult
}

// Run executes the DAG and returns every step's result in spec order. When
// ctx is cancelled it starts nothing new, lets running steps observe the
// cancellation, and reports the rest skipped.
func (e *Engine) Run(ctx context.Context) []model.StepResult {
	r := &run{Engine: e, clock: e.Clock, byName: map[string]int{}}
	if r.clock == nil {
		r.clock = realClock{}
	}
	r.nodes = make([]*node, len(e.Steps))
	for i, st := range e.Steps {
		r.nodes[i] = &node{step: st}
		r.byName[st.Name] = i
	}
	return r.loop(ctx)
}

// run is the state of one Run; only the loop goroutine touches nodes.
type run struct {
	*Engine
	clock  Clock
	nodes  []*node
	byName map[string]int
	emitMu sync.Mutex
	// stop, once set, is the skip reason of every step not started yet.
	stop string
}

func (r *run) loop(ctx context.Context) []model.StepResult {
	done := make(chan finished)
	running := 0
	for {
		if r.stop == "" && ctx.Err() != nil {
			r.stop = reasonCancelled // before settle: no Resume calls after a cancel
		}
		r.settle()
		for _, i := range r.ready() {
			if r.stop != "" || (r.Parallelism > 0 && running >= r.Parallelism) {
				break
			}
			n := r.nodes[i]
			n.state = stateRunning
			running++
			go func() { done <- finished{i, r.execute(ctx, n)} }()
		}
		if running == 0 {
			break
		}
		select {
		case f := <-done:
			running--
			r.finish(f.i, f.result)
			switch {
			case r.stop != "":
			case ctx.Err() != nil: // the step failed because the run was cancelled
				r.stop = reasonCancelled
			case f.result.Status == model.StatusFailed && r.nodes[f.i].step.OnError != spec.OnErrorContinue:
				r.stop = fmt.Sprintf("not run: step %s failed", f.result.Name)
			}
		case <-ctx.Done():
			if r.stop == "" {
				r.stop = reasonCancelled
			}
			// Running steps see ctx themselves; keep collecting them.
			for running > 0 {
				f := <-done
				running--
				r.finish(f.i, f.result)
			}
		}
	}
	r.skipRest()
	out := make([]model.StepResult, len(r.nodes))
	for i, n := range r.nodes {
		out[i] = n.result
	}
	return out
}

// settle decides every pending step whose needs are all decided: it becomes
// ready, or is skipped (excluded, resumed, or blocked by a failed need).
// Deciding one step can decide others, so it repeats until nothing changes.
func (r *run) settle() {
	for changed := true; changed; {
		changed = false
		for i, n := range r.nodes {
			if n.state != statePending {
				continue
			}
			blockedBy, reason, decided := r.needsOutcome(n.step)
			if !decided {
				continue
			}
			changed = true
			switch {
			case n.step.Excluded():
				n.blocked = blockedBy // excluded satisfies needs only once its own are met
				r.finish(i, r.skipped(n.step, n.step.Skip, "excluded: "+n.step.ExcludedBecause()))
			case r.stop != "":
				n.state = stateReady // skipRest reports it with the stop reason
			case blockedBy != "":
				n.blocked = blockedBy
				r.finish(i, r.skipped(n.step, spec.SkipBlocked, reason))
			default:
				if r.Resume != nil {
					if why, skip := r.Resume(n.step); skip {
						r.finish(i, r.skipped(n.step, spec.SkipResumed, why))
						continue
					}
				}
				n.state = stateReady
			}
		}
	}
}

// needsOutcome tells whether every need of st is decided and, if one did not
// succeed, which failed step is behind it and the skip reason to report.
func (r *run) needsOutcome(st *spec.Step) (blockedBy, reason string, decided bool) {
	for _, name := range st.Needs {
		j, ok := r.byName[name]
		if !ok {
			return name, fmt.Sprintf("needs %s, which is not a step of this spec", name), true
		}
		dep := r.nodes[j]
		if dep.state != stateDone {
			return "", "", false
		}
		if dep.blocked == "" && dep.result.Status != model.StatusFailed {
			continue
		}
		if dep.result.Status == model.StatusFailed {
			return name, fmt.Sprintf("needs %s, which failed", name), true
		}
		return dep.blocked, fmt.Sprintf("needs %s, which did not run (%s failed)", name, dep.blocked), true
	}
	return "", "", true
}

// ready lists the steps waiting for a slot, in spec order.
func (r *run) ready() []int {
	var idx []int
	for i, n := range r.nodes {
		if n.state == stateReady {
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	return idx
}

// skipRest reports every step that never ran: after a failure or a
// cancellation with the stop reason, otherwise (a cycle) as such.
func (r *run) skipRest() {
	reason := r.stop
	if reason == "" {
		reason = reasonCycle
	}
	for i, n := range r.nodes {
		if n.state == stateDone {
			continue
		}
		skip, why := spec.SkipStopped, reason
		if n.step.Excluded() {
			skip, why = n.step.Skip, "excluded: "+n.step.ExcludedBecause()
		}
		n.blocked = "(not run)"
		r.finish(i, r.skipped(n.step, skip, why))
	}
}

func (r *run) finish(i int, res model.StepResult) {
	n := r.nodes[i]
	n.state = stateDone
	n.result = res
	r.emit(model.Event{Kind: model.EventFinished, Step: res.Name, Attempt: res.Attempts, Result: &res})
	if r.OnFinish != nil {
		r.OnFinish(res)
	}
}

func (r *run) emit(ev model.Event) {
	if r.Emit == nil {
		return
	}
	ev.Time = r.clock.Now()
	ev.Message = r.Redactor.String(ev.Message)
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.Emit(ev)
}

// base is a result with the fields every status shares.
func (r *run) base(st *spec.Step) model.StepResult {
	res := model.StepResult{
		Name:  st.Name,
		Type:  st.Type(),
		Needs: st.Needs,
	}
	if r.PosOf != nil {
		res.Pos = r.PosOf(st.Path)
	}
	return res
}

func (r *run) skipped(st *spec.Step, skip spec.Skip, reason string) model.StepResult {
	res := r.base(st)
	res.Status, res.Skip = model.StatusSkipped, skip
	res.SkipReason = r.Redactor.String(reason)
	return res
}
