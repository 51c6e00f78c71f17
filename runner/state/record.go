package state

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// Run status values of a record.
const (
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
)

// Step status values of a record: what the step did in the run that last
// decided it. Only StepOK with an unchanged hash resumes.
const (
	StepOK      = "ok"
	StepFailed  = "failed"
	StepSkipped = "skipped"
)

// ResumeReason is the skip reason of a step the record resumes.
const ResumeReason = "unchanged since it succeeded in a previous run (state record)"

// maxErrorBytes bounds a step's stored error text: a Secret holds 1 MiB and
// the record is rewritten after every step.
const maxErrorBytes = 1024

// Record is the run-state record. It never holds the rendered spec: only
// hashes, outcomes and (redacted, truncated) error text.
type Record struct {
	// SpecName is metadata.name of the spec that wrote the record.
	SpecName     string                `json:"specName"`
	SpecHash     string                `json:"specHash"`
	KhookVersion string                `json:"khookVersion"`
	RunStatus    string                `json:"runStatus"`
	StartedAt    time.Time             `json:"startedAt"`
	UpdatedAt    time.Time             `json:"updatedAt"`
	Steps        map[string]StepRecord `json:"steps"`
	// Partial marks a record last written by a partial run (step
	// selection): the steps it left out keep their entries of earlier runs.
	Partial bool `json:"partial,omitempty"`
	// Inputs are the values of the spec's immutable: true variables, as the
	// run that wrote the record used them; a later run may not change them.
	Inputs map[string]string `json:"immutableInputs,omitempty"`
}

// StepRecord is one step's journal entry.
type StepRecord struct {
	Hash       string    `json:"hash"`
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	SkipReason string    `json:"skipReason,omitempty"`
	FinishedAt time.Time `json:"finishedAt"`

	// What the step put in the cluster (inventory.go, #22): names and UIDs
	// only, never an object's content.
	Type  string       `json:"type,omitempty"`
	Needs []string     `json:"needs,omitempty"`
	Prune *PruneRecord `json:"prune,omitempty"`
	// Inventory is what the step's last successful run applied or installed.
	Inventory []model.Owned `json:"inventory,omitempty"`
	// Orphans are what earlier runs put in the cluster and the step no
	// longer produces: pruned after the remaining steps.
	Orphans []model.Owned `json:"orphans,omitempty"`
	// Untracked: the step applied more than the record keeps; its
	// leftovers are not pruned.
	Untracked bool `json:"untracked,omitempty"`

	// ChartVersion and ChartDigest are the chart a helm step last
	// installed, upgraded to or found installed (name@version, the digest
	// the plan shows): a drift run compares them with what the repository
	// serves now. Records written before them have neither.
	ChartVersion string `json:"chartVersion,omitempty"`
	ChartDigest  string `json:"chartDigest,omitempty"`
}

// Resumes reports whether the step's last outcome lets a run with input hash
// h skip it: it succeeded with the same inputs.
func (r *Record) Resumes(step string, h string) bool {
	if r == nil || h == "" {
		return false
	}
	sr, ok := r.Steps[step]
	return ok && sr.Status == StepOK && sr.Hash == h
}

// entryFor turns an engine result into a journal entry. A step skipped by
// its skipIf ran (attempts > 0) and held: it counts as succeeded.
func entryFor(res model.StepResult, h string, rd *redact.Redactor, now time.Time) StepRecord {
	e := StepRecord{Hash: h, FinishedAt: now.UTC()}
	switch {
	case res.Status == model.StatusOK:
		e.Status = StepOK
	case res.Status == model.StatusSkipped && res.Attempts > 0:
		e.Status = StepOK
		e.SkipReason = truncate(rd.String(res.SkipReason))
	case res.Status == model.StatusFailed:
		e.Status = StepFailed
		e.Error = truncate(rd.String(res.Error))
	default:
		e.Status = StepSkipped
		e.SkipReason = truncate(rd.String(res.SkipReason))
	}
	return e
}

// truncate keeps at most maxErrorBytes of s, cut at a rune boundary.
func truncate(s string) string {
	if len(s) <= maxErrorBytes {
		return s
	}
	const marker = " ... (truncated)"
	cut := maxErrorBytes - len(marker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}

// Hashes computes every included step's input hash. A step that cannot be
// hashed (a file it references is missing) gets no hash: it never resumes,
// and running it reports the problem in the step's own words. Excluded steps
// are not hashed: their files may not exist where when: excludes them.
func Hashes(s *spec.Spec) map[string]string {
	out := make(map[string]string, len(s.Steps))
	for _, st := range s.Steps {
		if st.Excluded() {
			continue
		}
		if h, err := Hash(st, s.BaseDir); err == nil {
			out[st.Name] = h
		}
	}
	return out
}

// Ref names a record: the Secret namespace/name from the spec's state block.
type Ref struct {
	Namespace string
	Name      string
}

func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// RefFor returns the record of s, with the DSL's defaults; ok is false when
// the spec keeps no record.
func RefFor(s *spec.Spec) (ref Ref, ok bool) {
	if s == nil || s.State == nil || !s.State.Enabled {
		return Ref{}, false
	}
	ref = Ref{Namespace: spec.NamespaceOrDefault(s.State.Namespace), Name: s.State.Name}
	if ref.Name == "" {
		ref.Name = "khook-state-" + s.Metadata.Name
	}
	return ref, true
}

// lockName is the Lease beside the record.
func (r Ref) lockName() string { return r.Name + "-lock" }

func (r Ref) describe() string { return fmt.Sprintf("state record %s", r) }
