package report

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
