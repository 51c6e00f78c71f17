package ci

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/khook/khook/internal/ci/sticky"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/planfile"
)

// reviewed is the plan a pull request's khook comment recorded for this
// run's identifier, as the platform found it.
type reviewed struct {
	source      string // "pull request #7"
	number      int    // the pull request, 0 when none was found
	comment     sticky.Comment
	fingerprint string
	steps       map[string]model.Action // step -> action; nil when not recorded
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
		return model.PlanCheckOff
	}
	if r.in.PlanCheck != "" {
		return r.in.PlanCheck
	}
	if DetectPlatform(r.getenv) == GitHub && r.getenv("GITHUB_EVENT_NAME") == "push" {
		return model.PlanCheckStrict
	}
	return model.PlanCheckOff
}

// checkPlan compares a fresh plan with the reviewed one before apply
// writes anything. It returns the check for the results, or the outcome
// of a refused (strict) or failed (the plan could not be made) run.
func (r *runState) checkPlan(ctx context.Context, req Request, mode string) (*model.PlanCheck, *outcome) {
	rv := r.sink.reviewedPlan(ctx)
	r.reviewed = &rv
	c := &model.PlanCheck{Mode: mode, Source: rv.source, CommentURL: rv.comment.URL, Reviewed: rv.fingerprint, Problem: rv.problem}
	p, err := r.opts.Backend.Plan(ctx, req)
	if err != nil {
		return nil, r.failed(&outcome{command: r.in.Command}, "", err)
	}
	r.settlePlan(p)
	r.checked = p
	c.Current = p.Fingerprint
	if c.Problem == "" && c.Current == "" {
		c.Problem = "This khook made a plan without a fingerprint, so it cannot check it against the reviewed one."
	}
	if c.Problem == "" && rv.steps != nil {
		c.StepsKnown, c.Steps = true, model.CompareSteps(rv.steps, p)
	}
	c.NothingToApply = c.Current != "" && actsOnNothing(p)
	switch {
	case c.Passes():
		r.say("%s", strings.Join(c.Sentences(), " "))
		return c, nil
	case mode == model.PlanCheckWarn:
		r.warn(strings.Join(c.Sentences(), " ") + " Applying anyway (plan-check: warn).")
		return c, nil
	}
	return c, &outcome{command: r.in.Command, status: model.RunFailed, reason: c.Reason(),
		runErr: r.red.String(strings.Join(c.Sentences(), " ")), check: c, planNow: p}
}

// settlePlan gives a plan made for this run its identifier, the
// workspace-relative positions and the inputs.
func (r *runState) settlePlan(p *model.Plan) {
	p.Identifier = r.identifier
	for i := range p.Steps {
		p.Steps[i].Pos.File = r.relPath(p.Steps[i].Pos.File)
	}
	p.Inputs = model.InputsOf(r.spec)
}

// refusedNote is the comment's status-line note for a refused apply.
func refusedNote(c *model.PlanCheck) string {
	if c.Problem != "" {
		return "there is no reviewed plan to check against"
	}
	return fmt.Sprintf("the plan changed since review (reviewed %s, now %s)", model.ShortFingerprint(c.Reviewed), model.ShortFingerprint(c.Current))
}

// markRefused rewrites the status line of the reviewed comment to say the
// apply was refused and why, linking the run; the reviewed plan below it
// stays as it was. It returns the comment's URL, "" when it wrote nothing.
func (r *runState) markRefused(ctx context.Context, oc *outcome, commit string) string {
	rv := r.reviewed
	if rv == nil || rv.update == nil || r.in.Comment == CommentNever {
		return ""
	}
	line := report.CommentStatusLine(report.CommentOptions{Status: model.CommentRefused, Commit: commit,
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

// expect is the plan an apply that passed plan-check is held to under the
// state lock: the plan just compared, so nothing can slip in between the
// check and the first write. nil when the plan has no digests to hold to.
func (r *runState) expect(c *model.PlanCheck) *planfile.File {
	if r.checked == nil || r.checked.Digests == nil {
		return nil
	}
	return planfile.New(r.checked, r.opts.Version, r.opts.Now())
}

// planFilePath is the plan-file input resolved against the workspace, as
// artifact paths are.
func (r *runState) planFilePath() string {
	if filepath.IsAbs(r.in.PlanFile) {
		return r.in.PlanFile
	}
	return filepath.Join(r.rootDir, r.in.PlanFile)
}

// savePlan writes the plan file (plan-file input) through the redactor:
// a secret that reached the plan would break its fingerprint, so the file
// fails closed rather than leak.
func (r *runState) savePlan(p *model.Plan) error {
	var b bytes.Buffer
	if err := planfile.Write(&b, planfile.New(p, r.opts.Version, r.opts.Now())); err != nil {
		return fmt.Errorf("cannot save the plan file %s: %w", r.in.PlanFile, err)
	}
	path := r.planFilePath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot save the plan file %s: %w", r.in.PlanFile, err)
	}
	if err := os.WriteFile(path, []byte(r.red.String(b.String())), 0o644); err != nil {
		return fmt.Errorf("cannot save the plan file %s: %w", r.in.PlanFile, err)
	}
	r.say("khook plan: saved the plan to %s (fingerprint %s)", r.in.PlanFile, model.ShortFingerprint(p.Fingerprint))
	return nil
}

// loadPlan reads the plan file an apply is held to.
func (r *runState) loadPlan() (*planfile.File, error) {
	fh, err := os.Open(r.planFilePath())
	if err != nil {
		return nil, fmt.Errorf("cannot read the plan file %s (did the plan job save it as an artifact, and does this job fetch it?): %w", r.in.PlanFile, err)
	}
	defer fh.Close()
	f, err := planfile.Read(fh)
	if err != nil {
		return nil, fmt.Errorf("plan file %s: %w", r.in.PlanFile, err)
	}
	return f, nil
}

// holdToPlan decides what an apply is held to before it runs: the plan
// file, or the plan plan-check compared with the reviewed one. It returns
// the outcome of an apply that must not run.
func (r *runState) holdToPlan(ctx context.Context, req *Request, oc *outcome) *outcome {
	switch mode := r.planCheckMode(); {
	case r.in.Command == CmdApply && r.in.PlanFile != "":
		f, err := r.loadPlan()
		if err != nil {
			return r.failed(oc, model.ReasonPlanNotFound, err)
		}
		req.Expect = f
		oc.check = &model.PlanCheck{Mode: model.PlanCheckStrict, Source: "the plan file " + r.in.PlanFile, Reviewed: f.Plan.Fingerprint}
	case mode != model.PlanCheckOff:
		check, refused := r.checkPlan(ctx, *req, mode)
		if refused != nil {
			return refused
		}
		oc.check, req.Expect = check, r.expect(check)
	}
	return nil
}

// checkFor is the check the results record: none when the apply itself
// refused (its error says why); a plan file's check is current once the
// apply held to it ran.
func (oc *outcome) checkFor(res *model.Results) *model.PlanCheck {
	if oc.check == nil || res.FailureReason == model.ReasonPlanChanged {
		return nil
	}
	if oc.check.Current == "" {
		oc.check.Current = oc.check.Reviewed
	}
	return oc.check
}

// savePlanFile saves a plan job's plan (plan-file); a plan the apply job
// cannot have fails the job.
func (r *runState) savePlanFile(oc *outcome, p *model.Plan) {
	if err := r.savePlan(p); err != nil {
		r.warn(err.Error())
		oc.status, oc.reason = model.RunFailed, model.ReasonStepFailed
	}
}

// actsOnNothing reports whether a plan would neither change the cluster nor
// run a job or restart a rollout: a job's command is code run in the
// cluster, and strict applies no unreviewed code.
func actsOnNothing(p *model.Plan) bool {
	for _, s := range p.Steps {
		if model.IsChange(s.Action) || s.Action == model.ActionRun || s.Action == model.ActionRestart {
			return false
		}
	}
	return true
}
