package state

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// Options configure Open.
type Options struct {
	Client kubernetes.Interface
	Lock   LockOptions
	// Version is the khook version written into the record.
	Version  string
	Redactor *redact.Redactor
	// Now is the clock of the record's timestamps; nil is time.Now.
	Now func() time.Time
	// Notify, when set, is told once what the run did to the record
	// besides journaling (an upstream khook record converted).
	Notify func(msg string)
}

// Session is one apply's use of a record: the lock is held, the previous
// record read, every step hashed. Plug Resume and OnFinish into the engine,
// then Close with the results.
//
//	sess, err := state.Open(ctx, s, opts)   // nil session: the spec keeps no record
//	eng.Resume, eng.OnFinish = sess.Resume, sess.OnFinish
//	results := eng.Run(ctx)
//	err = sess.Close(ctx)                   // non-nil: the record could not be written (exit 1)
type Session struct {
	Ref      Ref
	Store    *Store
	Lock     *Lock
	Previous *Record // as the last run left it; nil when there was none
	// Converted says the previous record was upstream khook's, converted
	// to khook's own on this run's first write ("" otherwise).
	Converted string

	mu       sync.Mutex
	spec     *spec.Spec
	record   *Record
	hashes   map[string]string
	resumed  map[string]bool
	redactor *redact.Redactor
	now      func() time.Time
	saveErr  error
	failed   bool // a step failed, or did not start, in this run
	closed   bool
	destroy  bool // OpenDestroy: journal teardown, delete the record at the end
	partial  bool // step selection left steps out: their entries stay as they are
}

// Open prepares the record of s for an apply: it hashes every step, refuses a
// foreign Secret, takes the lock (failing with a LockedError when another run
// holds it), reads the previous record and marks the run running. A spec
// without an enabled state block returns (nil, nil); a nil *Session's
// methods are no-ops, so callers need not branch.
func Open(ctx context.Context, s *spec.Spec, opts Options) (*Session, error) {
	return open(ctx, s, opts, false)
}

// OpenDestroy prepares the record of s for a destroy: the same guard and
// lock as Open, but nothing resumes, each step torn down drops out of the
// record (so a later apply re-runs it), and Close deletes the record when
// every step was torn down. No record is created when there is none.
func OpenDestroy(ctx context.Context, s *spec.Spec, opts Options) (*Session, error) {
	return open(ctx, s, opts, true)
}

func open(ctx context.Context, s *spec.Spec, opts Options, destroy bool) (*Session, error) {
	ref, ok := RefFor(s)
	if !ok {
		return nil, nil
	}
	if opts.Client == nil {
		return nil, errors.New("state: no Kubernetes client to reach the record")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	hashes := Hashes(s)
	specHash, err := SpecHash(s, hashes)
	if err != nil {
		return nil, err
	}
	store := NewStore(opts.Client, ref)
	// Refuse a foreign Secret before leaving a Lease beside it.
	if _, err := store.Load(ctx); err != nil {
		return nil, err
	}
	lockOpts := opts.Lock
	if lockOpts.Now == nil {
		lockOpts.Now = now
	}
	lock, err := Acquire(ctx, opts.Client, ref, lockOpts)
	if err != nil {
		return nil, err
	}
	prev, err := store.Load(ctx) // again: the previous holder may have written it
	if err != nil {
		_ = lock.Release(ctx)
		return nil, err
	}
	sess := &Session{Ref: ref, Store: store, Lock: lock, Previous: prev, hashes: hashes,
		resumed: map[string]bool{}, redactor: opts.Redactor, now: now, destroy: destroy, spec: s, partial: partial(s)}
	if store.converted {
		sess.Converted = convertedNote(ref, prev)
		if opts.Notify != nil {
			opts.Notify(sess.Converted)
		}
	}
	if destroy {
		sess.record = prev
		return sess, nil
	}
	inputs := immutableInputs(s, opts.Redactor)
	if err := checkImmutable(ref, prev, inputs); err != nil {
		_ = lock.Release(ctx)
		return nil, err
	}
	t := now().UTC()
	sess.record = &Record{SpecName: s.Metadata.Name, SpecHash: specHash, KhookVersion: opts.Version,
		RunStatus: RunRunning, StartedAt: t, UpdatedAt: t, Steps: map[string]StepRecord{}, Inputs: inputs}
	if sess.partial && prev != nil {
		// A partial run applied only some steps: the spec as a whole was
		// last applied as the previous record says.
		sess.record.SpecHash, sess.record.Partial = prev.SpecHash, true
	} else if sess.partial {
		sess.record.Partial = true
	}
	if prev != nil {
		for name, e := range prev.Steps {
			// A step no longer in the spec drops out once nothing it put
			// in the cluster is left to prune.
			if s.Step(name) != nil || len(e.Leftovers(false)) > 0 {
				sess.record.Steps[name] = e
			}
		}
	}
	if err := store.Save(ctx, sess.record); err != nil {
		_ = lock.Release(ctx)
		return nil, err
	}
	return sess, nil
}

// partial reports whether step selection left any step of s out.
func partial(s *spec.Spec) bool {
	for _, st := range s.Steps {
		if st.Skip == spec.SkipNotSelected {
			return true
		}
	}
	return false
}

// Resume is the engine's Resume hook: a step resumes when the previous record
// says it succeeded with the same input hash.
func (s *Session) Resume(step *spec.Step) (reason string, skip bool) {
	if s == nil || s.destroy {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Previous.Resumes(step.Name, s.hashes[step.Name]) {
		s.resumed[step.Name] = true
		return ResumeReason, true
	}
	return "", false
}

// OnFinish is the engine's OnFinish hook: it journals the step and writes the
// record at once, so an interrupted run resumes from here. A write failure is
// kept for Close (the run then exits 1) and later steps still try to write.
func (s *Session) OnFinish(res model.StepResult) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if res.Status == model.StatusFailed {
		s.failed = true
	}
	if res.Skip == spec.SkipNotSelected {
		return // not part of this run: its entry stays as the last run left it
	}
	if s.destroy {
		s.journalTeardown(res)
		return
	}
	if res.Skip == spec.SkipBlocked || res.Skip == spec.SkipStopped {
		// Never started (the run was cancelled, or a need failed): the
		// run did not succeed even when no step of its own failed.
		s.failed = true
	}
	if !s.resumed[res.Name] { // a resumed step keeps the entry that let it resume
		prev := s.record.Steps[res.Name]
		e := entryFor(res, s.hashes[res.Name], s.redactor, s.now())
		st := s.spec.Step(res.Name)
		if st != nil {
			e.Type, e.Needs, e.Prune = st.Type(), st.Needs, pruneRecord(s.spec.PruneOf(st))
		}
		if items, ok := inventoryOf(st, res); ok {
			track(&e, prev, items)
		} else { // failed, skipped or not run: what it put there before stands
			e.Inventory, e.Orphans, e.Untracked = prev.Inventory, prev.Orphans, prev.Untracked
		}
		e.ChartVersion, e.ChartDigest = prev.ChartVersion, prev.ChartDigest
		if res.Chart != nil && res.Status == model.StatusOK { // what the release now runs
			e.ChartVersion, e.ChartDigest = res.Chart.Version, res.Chart.Digest
		}
		s.record.Steps[res.Name] = e
	}
	s.record.UpdatedAt = s.now().UTC()
	s.saveLocked()
}

// journalTeardown drops a torn-down step from the record: it no longer
// stands, so the next apply must run it.
func (s *Session) journalTeardown(res model.StepResult) {
	if s.record == nil || res.Status != model.StatusOK {
		return
	}
	if _, ok := s.record.Steps[res.Name]; !ok {
		return
	}
	delete(s.record.Steps, res.Name)
	s.record.UpdatedAt = s.now().UTC()
	s.saveLocked()
}

// saveLocked writes the record under a bounded context of its own: the run's
// context may already be cancelled, and the journal must still land.
func (s *Session) saveLocked() {
	select {
	case <-s.Lock.Lost():
		s.keep(s.Lock.Err())
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.keep(s.Store.Save(ctx, s.record))
}

func (s *Session) keep(err error) {
	if err != nil && s.saveErr == nil {
		s.saveErr = err
	}
}

// Close marks the run succeeded (every step succeeded, was excluded or
// resumed, and ctx was not cancelled) or failed, writes the record and releases the lock. Its error says the
// record could not be written: semantics.md makes that a failed run even
// when every step succeeded.
func (s *Session) Close(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.saveErr
	}
	s.closed = true
	if s.destroy {
		return s.closeDestroy(ctx)
	}
	s.record.RunStatus = RunSucceeded
	if s.failed || ctx.Err() != nil {
		s.record.RunStatus = RunFailed
	}
	s.record.UpdatedAt = s.now().UTC()
	s.saveLocked()
	if err := s.Lock.Release(ctx); err != nil {
		s.keep(err)
	}
	if s.saveErr != nil {
		return fmt.Errorf("the run's outcome could not be recorded: %w", s.saveErr)
	}
	return nil
}

// closeDestroy deletes the record after a full teardown; after a partial one
// the record keeps the steps still standing.
func (s *Session) closeDestroy(ctx context.Context) error {
	if s.record != nil && !s.failed && !s.partial && ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		s.keep(s.Store.Delete(dctx))
		cancel()
	}
	if err := s.Lock.Release(ctx); err != nil {
		s.keep(err)
	}
	if s.saveErr != nil {
		return fmt.Errorf("the destroy's outcome could not be recorded: %w", s.saveErr)
	}
	return nil
}

// Held reports whether the run holds the record's lock now: false without a
// record (nil session) and once another run took the lock over.
func (s *Session) Held() bool {
	if s == nil {
		return false
	}
	select {
	case <-s.Lock.Lost():
		return false
	default:
		return true
	}
}

// Record returns a copy of the record as written so far.
func (s *Session) Record() *Record {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.record == nil {
		return nil
	}
	cp := *s.record
	cp.Steps = make(map[string]StepRecord, len(s.record.Steps))
	for k, v := range s.record.Steps {
		cp.Steps[k] = v
	}
	return &cp
}

// Fail marks the run failed before any step ran (apply --plan refused a
// changed plan), so Close records a failed run, not a succeeded one.
func (s *Session) Fail() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = true
}
