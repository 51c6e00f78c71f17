package cmdutil

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/planfile"
)

// WritePlanFile saves a live plan to path (plan --out). Its text goes
// through the run's redactor like every other output; its digests are
// one-way (runner/planfile.Hasher) and are not masked, so a short secret
// that happens to occur in a hex digest cannot corrupt the file. The file
// is read back before it replaces path: a plan file that could not be
// applied is never left behind.
func (f *Factory) WritePlanFile(path string, p *model.Plan) error {
	if p.Offline || p.Digests == nil {
		return FlagErrorf("--out saves a plan made against the cluster: drop --offline")
	}
	data, err := planfile.Marshal(planfile.New(redactPlanText(p, f.Redactor.String), f.Version, f.now()))
	if err != nil {
		return err
	}
	if _, err := planfile.Read(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("cannot save the plan to %s: %v", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".khook-plan-*")
	if err != nil {
		return fmt.Errorf("cannot save the plan to %s: %v", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("cannot save the plan to %s: %v", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cannot save the plan to %s: %v", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("cannot save the plan to %s: %v", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cannot save the plan to %s: %v", path, err)
	}
	return nil
}

// ReadPlanFile reads a plan file saved by plan --out.
func ReadPlanFile(path string) (*planfile.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read plan file: %v", err)
	}
	defer fh.Close()
	pf, err := planfile.Read(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pf, nil
}

func (f *Factory) now() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

// redactPlanText is a copy of p with every free-text field masked: what
// the fingerprint covers (names, actions, digests) is left as planned.
func redactPlanText(p *model.Plan, mask func(string) string) *model.Plan {
	cp := *p
	cp.Steps = make([]model.PlanStep, len(p.Steps))
	for i, s := range p.Steps {
		s.Summary, s.Reason, s.When = mask(s.Summary), mask(s.Reason), mask(s.When)
		s.Diff, s.DiffNote = mask(s.Diff), mask(s.DiffNote)
		cp.Steps[i] = s
	}
	cp.Inputs = make([]model.Input, len(p.Inputs))
	for i, in := range p.Inputs {
		in.Value = mask(in.Value)
		cp.Inputs[i] = in
	}
	if p.Inputs == nil {
		cp.Inputs = nil
	}
	return &cp
}
