package state

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/khook/khook/spec"
)

// Status is what `khook status` shows: the last run's record and which steps
// the next apply resumes.
type Status struct {
	Found bool `json:"found"`
	// Enabled is false when the spec has no (enabled) state block.
	Enabled bool   `json:"enabled"`
	Record  string `json:"recordRef,omitempty"` // namespace/name of the Secret
	// SpecChanged: the spec (or a file it references) differs from the one
	// that wrote the record.
	SpecChanged bool `json:"specChanged"`
	// ResumableSteps are the steps the next apply skips, in spec order.
	ResumableSteps []string `json:"resumableSteps"`
	// Steps predicts every step of the current spec: resume, or run and why.
	Steps []StepStatus `json:"steps,omitempty"`
	// Lock is set while a run holds the record.
	Lock *LockInfo `json:"lock,omitempty"`
	Data *Record   `json:"record,omitempty"`
}

// StepStatus is one step's prediction for the next apply.
type StepStatus struct {
	Name       string `json:"name"`
	Last       string `json:"last,omitempty"` // ok | failed | skipped; empty when never recorded
	Resumes    bool   `json:"resumes"`
	Reason     string `json:"reason"`
	Error      string `json:"error,omitempty"`
	SkipReason string `json:"skipReason,omitempty"`
	// Skip is set for a step the next apply leaves out (spec.Skip).
	Skip spec.Skip `json:"skip,omitempty"`
}

// LockInfo describes the lock a run holds.
type LockInfo struct {
	Holder  string    `json:"holder"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	Expired bool      `json:"expired"`
}

// GetStatus reads the record of s (read-only: no lock taken) and predicts
// the next apply. now is the clock that judges the lock; nil is time.Now.
func GetStatus(ctx context.Context, client kubernetes.Interface, s *spec.Spec, now func() time.Time) (*Status, error) {
	ref, ok := RefFor(s)
	if !ok {
		return &Status{ResumableSteps: []string{}}, nil
	}
	if now == nil {
		now = time.Now
	}
	hashes := Hashes(s)
	st := &Status{Enabled: true, Record: ref.String(), ResumableSteps: []string{}}
	rec, err := NewStore(client, ref).Load(ctx)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		st.Found, st.Data = true, rec
		specHash, err := SpecHash(s, hashes)
		if err != nil {
			return nil, err
		}
		st.SpecChanged = specHash != rec.SpecHash
	}
	st.Steps = predict(s, rec, hashes)
	for _, p := range st.Steps {
		if p.Resumes {
			st.ResumableSteps = append(st.ResumableSteps, p.Name)
		}
	}
	lease, err := client.CoordinationV1().Leases(ref.Namespace).Get(ctx, ref.lockName(), metav1.GetOptions{})
	switch {
	case err == nil:
		l := &Lock{duration: DefaultLeaseDuration}
		if holder, expires := l.holder(lease); holder != "" {
			st.Lock = &LockInfo{Holder: holder, Since: sinceOf(lease), Expires: expires, Expired: !now().Before(expires)}
		}
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("cannot read the lock of the %s: %w", ref.describe(), err)
	}
	return st, nil
}

// predict says, per step, whether the next apply resumes it.
func predict(s *spec.Spec, rec *Record, hashes map[string]string) []StepStatus {
	out := make([]StepStatus, 0, len(s.Steps))
	for _, step := range s.Steps {
		p := StepStatus{Name: step.Name}
		e, seen := StepRecord{}, false
		if rec != nil {
			e, seen = rec.Steps[step.Name]
		}
		if seen {
			p.Last, p.Error, p.SkipReason = e.Status, e.Error, e.SkipReason
		}
		switch {
		case step.Excluded():
			p.Skip, p.Reason = step.Skip, "excluded: "+step.ExcludedBecause()
		case !seen:
			p.Reason = "runs: not in the record"
		case e.Status == StepFailed:
			p.Reason = "runs: it failed in the last run"
		case e.Status != StepOK:
			p.Reason = "runs: it did not run in the last run"
		case e.Hash != hashes[step.Name]:
			p.Reason = "runs: its inputs changed since it succeeded"
		default:
			p.Resumes, p.Reason = true, "resumes: "+ResumeReason
		}
		out = append(out, p)
	}
	return out
}

// WriteText prints a status for a person.
func (st *Status) WriteText(w io.Writer) error {
	var b strings.Builder
	switch {
	case !st.Enabled:
		b.WriteString("state: disabled (the spec has no state: block)\n")
	case !st.Found:
		fmt.Fprintf(&b, "state: no record at secret %s: the next apply runs every step\n", st.Record)
	default:
		r := st.Data
		fmt.Fprintf(&b, "state: secret %s\n", st.Record)
		fmt.Fprintf(&b, "last run: %s (started %s, updated %s, khook %s)\n", r.RunStatus,
			r.StartedAt.UTC().Format(time.RFC3339), r.UpdatedAt.UTC().Format(time.RFC3339), orDash(r.KhookVersion))
		if st.SpecChanged {
			b.WriteString("spec: changed since the last run\n")
		} else {
			b.WriteString("spec: unchanged since the last run\n")
		}
	}
	if st.Lock != nil {
		if st.Lock.Expired {
			fmt.Fprintf(&b, "lock: expired (last held by %s since %s)\n", st.Lock.Holder, st.Lock.Since.UTC().Format(time.RFC3339))
		} else {
			fmt.Fprintf(&b, "lock: held by %s since %s (expires at %s unless renewed)\n",
				st.Lock.Holder, st.Lock.Since.UTC().Format(time.RFC3339), st.Lock.Expires.UTC().Format(time.RFC3339))
		}
	}
	if len(st.Steps) > 0 {
		width := 4
		for _, p := range st.Steps {
			width = max(width, len(p.Name))
		}
		fmt.Fprintf(&b, "\n%-*s  %-7s  %s\n", width, "STEP", "LAST", "NEXT APPLY")
		for _, p := range st.Steps {
			fmt.Fprintf(&b, "%-*s  %-7s  %s\n", width, p.Name, orDash(p.Last), p.Reason)
			if p.Error != "" {
				fmt.Fprintf(&b, "%-*s  %-7s  error: %s\n", width, "", "", firstLine(p.Error))
			}
		}
		fmt.Fprintf(&b, "\n%d of %d steps resume\n", len(st.ResumableSteps), countIncluded(st.Steps))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func countIncluded(ps []StepStatus) int {
	n := 0
	for _, p := range ps {
		if !p.Skip.Excluded() {
			n++
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
