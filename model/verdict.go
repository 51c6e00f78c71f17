package model

import (
	"fmt"
	"strings"
	"time"

	"github.com/khook/khook/words"
)

// Tone is how a verdict or status reads; renderers choose its mark (an
// emoji in Markdown) and plain text leaves it out, so no renderer parses a
// mark back off a string.
type Tone int

const (
	ToneOK      Tone = iota // succeeded, no changes, no drift
	ToneNote                // changes pending, an offline plan
	ToneWarning             // drift
	ToneFailed
	ToneSkipped
)

// Mark is the tone's Markdown mark.
func (t Tone) Mark() string {
	switch t {
	case ToneOK:
		return "✅"
	case ToneNote:
		return "📝"
	case ToneWarning:
		return "⚠️"
	case ToneSkipped:
		return "⏭️"
	}
	return "❌"
}

// Verdict is a run's or plan's one-line verdict: a tone and a sentence.
type Verdict struct {
	Tone Tone
	Text string // "No changes: the cluster matches the spec."
}

// Markdown is the verdict with its mark: "✅ No changes: ...".
func (v Verdict) Markdown() string { return v.Tone.Mark() + " " + v.Text }

// CommentStatus is the word on a comment's status line.
type CommentStatus string

// Comment statuses, shown on the comment's status line.
const (
	CommentPlanned   CommentStatus = "planned"
	CommentApplied   CommentStatus = "applied"
	CommentDestroyed CommentStatus = "destroyed"
	CommentFailed    CommentStatus = "failed"
	CommentDrift     CommentStatus = "drift detected"
	CommentNoDrift   CommentStatus = "no drift"
	CommentInvalid   CommentStatus = "invalid spec"
	// CommentRefused: the apply after the merge found the plan changed
	// since review and applied nothing (plan-check: strict).
	CommentRefused CommentStatus = "apply refused"
	// CommentUnchanged: changed-only found no file of the spec changed on
	// the pull request, and did not plan.
	CommentUnchanged CommentStatus = "not planned (unchanged)"
)

// Tone is how the status reads.
func (s CommentStatus) Tone() Tone {
	switch s {
	case CommentPlanned, CommentUnchanged:
		return ToneNote
	case CommentApplied, CommentDestroyed, CommentNoDrift:
		return ToneOK
	case CommentDrift:
		return ToneWarning
	}
	return ToneFailed
}

// PlanVerdict is the one-line verdict of a plan (drift names changes drift).
func PlanVerdict(p *Plan, drift bool) Verdict {
	changed := 0
	for _, s := range p.Steps {
		if IsChange(s.Action) || (drift && s.Drifted()) {
			changed++
		}
	}
	failing := len(p.Failing())
	kept := Kept(p)
	switch {
	case p.Offline:
		return Verdict{ToneNote, "Offline plan: actions are not assessed against a cluster."}
	case failing > 0:
		return Verdict{ToneFailed, fmt.Sprintf("%d %s would fail on apply.", failing, words.Plural(failing, "step", "steps"))}
	case changed == 0 && len(kept) > 0 && drift:
		return Verdict{ToneNote, "No drift to repair; " + keptPhrase(kept) + "."}
	case changed == 0 && len(kept) > 0:
		// What the spec dropped and khook keeps is still in the cluster:
		// the cluster does not match the spec.
		return Verdict{ToneNote, "No changes to apply; " + keptPhrase(kept) + "."}
	case changed == 0 && drift:
		return Verdict{ToneOK, "No drift: the cluster matches the spec."}
	case changed == 0:
		return Verdict{ToneOK, "No changes: the cluster matches the spec."}
	case drift:
		return Verdict{ToneWarning, fmt.Sprintf("Drift detected: %d %s the spec.", changed, words.Plural(changed, "step no longer matches", "steps no longer match"))}
	}
	v := Verdict{ToneNote, fmt.Sprintf("%d %s would change the cluster.", changed, words.Plural(changed, "step", "steps"))}
	if gone := DataDeletions(p); len(gone) > 0 {
		v.Tone, v.Text = ToneWarning, v.Text+" It deletes "+strings.Join(gone, ", ")+"."
	}
	return v
}

// DataDeletions names each object the plan deletes with data (an explicit
// deleteCRDs, deleteData or prune: {crds: true} / {data: true}): "CRD
// widgets.example.com and its 2 Widget objects in 1 namespace",
// "PersistentVolumeClaim shop/data and its data (...)".
func DataDeletions(p *Plan) []string {
	var out []string
	for _, s := range p.Steps {
		for _, o := range s.Objects {
			if o.Action == ActionDelete && o.With != "" {
				out = append(out, o.Deleted()+" and "+o.With)
			}
		}
	}
	return out
}

// Kept names each object the plan keeps though the spec no longer has it
// (a PVC pruning keeps, a CRD with custom resources, a helm.sh/resource-
// policy: keep object): "PersistentVolumeClaim shop/data".
func Kept(p *Plan) []string {
	var out []string
	for _, s := range p.Steps {
		for _, o := range s.Objects {
			if o.Action == ActionKeep {
				out = append(out, o.Deleted())
			}
		}
	}
	return out
}

// keptPhrase is "1 object kept: PersistentVolumeClaim shop/data", naming
// at most three.
func keptPhrase(kept []string) string {
	names := kept
	if len(names) > 3 {
		names = append(names[:3:3], fmt.Sprintf("%d more", len(kept)-3))
	}
	return fmt.Sprintf("%d %s kept: %s", len(kept), words.Plural(len(kept), "object", "objects"), strings.Join(names, ", "))
}

// Deleted names a deleted object as the plan's data warnings do: "CRD
// widgets.example.com", "PersistentVolumeClaim shop/data".
func (o ObjectPlan) Deleted() string {
	if o.Kind == "CustomResourceDefinition" {
		return "CRD " + o.Name
	}
	if o.Namespace != "" {
		return o.Kind + " " + o.Namespace + "/" + o.Name
	}
	return o.Kind + " " + o.Name
}

// ResultsVerdict is the one-line verdict of apply or destroy.
func ResultsVerdict(r *Results) Verdict {
	counts := map[Status]int{}
	for _, s := range r.Steps {
		counts[s.Status]++
	}
	d := FormatDuration(time.Duration(r.DurationMs) * time.Millisecond)
	tally := fmt.Sprintf("%d ok, %d failed, %d skipped", counts[StatusOK], counts[StatusFailed], counts[StatusSkipped])
	if r.Status == RunOK {
		return Verdict{ToneOK, fmt.Sprintf("%s succeeded in %s: %s.", TitleCase(r.Command), d, tally)}
	}
	why := ""
	if r.FailureReason != "" {
		why = " (" + r.FailureReason + ")"
	}
	return Verdict{ToneFailed, fmt.Sprintf("%s failed%s after %s: %s.", TitleCase(r.Command), why, d, tally)}
}

// TitleCase capitalises a command name for a sentence's start ("Apply").
func TitleCase(s string) string {
	if s == "" {
		return "Run"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
