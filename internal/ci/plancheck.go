package ci

import (
	"context"
	"fmt"
	"strings"

	"github.com/khook/khook/internal/ci/sticky"
	"github.com/khook/khook/report"
)

// reviewed is the plan a pull request's khook comment recorded for this
// run's identifier, as the platform found it.
type reviewed struct {
	source      string // "pull request #7"
	number      int    // the pull request, 0 when none was found
	comment     sticky.Comment
	fingerprint string
	steps       map[string]string // step -> action; nil when not recorded
	// problem says why there is no reviewed plan to check against.
	problem string
	// update rewrites the comment; nil when there is none to rewrite.
	update func(ctx context.Context, body string) error
}

// planCheckMode is the plan-check input settled: only apply checks, and
// an unset input means strict on a GitHub push (the apply after a merge
// into the branch the push went to) and off anywhere else — a manual run
// (workflow_dispatch), a schedule or a pull request's own apply is its own
// review.
func (r *runState) planCheckMode() string {
	if r.in.Command != CmdApply {
		return report.PlanCheckOff
	}
	if r.in.PlanCheck != "" {
		return r.in.PlanCheck
	}
	if DetectPlatform(r.getenv) == GitHub && r.getenv("GITHUB_EVENT_NAME") == "push" {
		return report.PlanCheckStrict
	}
	return report.PlanCheckOff
}

// checkPlan compares a fresh plan with the reviewed one before apply
// writes anything. It returns the check for the results, or the outcome
// of a refused (strict) or failed (the plan could not be made) run.
func (r *runState) checkPlan(ctx context.Context, req Request, mode string) (*report.PlanCheck, *outcome) {
	rv := r.sink.reviewedPlan(ctx)
	r.reviewed = &rv
	c := &report.PlanCheck{Mode: mode, Source: rv.source, CommentURL: rv.comment.URL, Reviewed: rv.fingerprint, Problem: rv.problem}
	p, err := r.opts.Backend.Plan(ctx, req)
	if err != nil {
		return nil, r.failed(&outcome{command: r.in.Command}, "", err)
	}
	r.settlePlan(p)
	c.Current = p.Fingerprint
	if c.Problem == "" && c.Current == "" {
		c.Problem = "This khook made a plan without a fingerprint, so it cannot check it against the reviewed one."
	}
	if c.Problem == "" && rv.steps != nil {
		c.StepsKnown, c.Steps = true, report.CompareSteps(rv.steps, p)
	}
	switch {
	case c.Matches():
		r.say("%s", strings.Join(c.Sentences(), " "))
		return c, nil
	case mode == report.PlanCheckWarn:
		r.warn(strings.Join(c.Sentences(), " ") + " Applying anyway (plan-check: warn).")
		return c, nil
	}
	return c, &outcome{command: r.in.Command, status: report.RunFailed, reason: c.Reason(), exit: exitFailure,
		runErr: r.red.String(strings.Join(c.Sentences(), " ")), check: c, planNow: p}
}

// settlePlan gives a plan made for this run its identifier, the
// workspace-relative positions and the inputs.
func (r *runState) settlePlan(p *report.Plan) {
	p.Identifier = r.identifier
	for i := range p.Steps {
		p.Steps[i].Pos.File = r.relPath(p.Steps[i].Pos.File)
	}
	p.Inputs = report.InputsOf(r.spec)
}

// refusedNote is the comment's status-line note for a refused apply.
func refusedNote(c *report.PlanCheck) string {
	if c.Problem != "" {
		return "there is no reviewed plan to check against"
	}
	return fmt.Sprintf("the plan changed since review (reviewed %s, now %s)", report.ShortFingerprint(c.Reviewed), report.ShortFingerprint(c.Current))
}

// markRefused rewrites the status line of the reviewed comment to say the
// apply was refused and why, linking the run; the reviewed plan below it
// stays as it was. It returns the comment's URL, "" when it wrote nothing.
func (r *runState) markRefused(ctx context.Context, oc *outcome, commit string) string {
	rv := r.reviewed
	if rv == nil || rv.update == nil || r.in.Comment == CommentNever {
		return ""
	}
	line := report.CommentStatusLine(report.CommentOptions{Status: report.CommentRefused, Commit: commit,
		RunURL: r.sink.runURL(), Note: refusedNote(oc.check)})
	body, ok := report.ReplaceCommentStatus(rv.comment.Body, line)
	if !ok {
		r.warn(fmt.Sprintf("khook's comment on %s has no status line to mark the refusal on.", rv.source))
		return ""
	}
	if err := rv.update(ctx, r.red.String(body)); err != nil {
		r.warn(fmt.Sprintf("khook could not mark the refused apply on %s: %s", rv.source, r.red.String(err.Error())))
		return ""
	}
	return rv.comment.URL
}
