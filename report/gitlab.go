package report

import (
	"encoding/json"
	"io"

	"github.com/khook/khook/model"
)

// TerraformReport is GitLab's artifacts:reports:terraform format, which the
// merge request widget shows as "N to add, N to change, N to delete".
type TerraformReport struct {
	Create int `json:"create"`
	Update int `json:"update"`
	Delete int `json:"delete"`
}

// TerraformReportOf maps a plan's predicted actions, one per step, onto the
// widget's three counts: install/create add, upgrade/configure change,
// delete deletes. Job runs and restarts act on every apply and are not
// counted (IsChange).
func TerraformReportOf(p *model.Plan) TerraformReport {
	var t TerraformReport
	for _, s := range p.Steps {
		t.count(s.Action.Done())
	}
	return t
}

// TerraformReportOfResults counts what an apply or destroy did, per object
// and release of the steps' change sets.
func TerraformReportOfResults(r *model.Results) TerraformReport {
	var t TerraformReport
	for _, s := range r.Steps {
		for _, c := range s.Changes {
			t.count(c.Action)
		}
	}
	return t
}

func (t *TerraformReport) count(action model.Did) {
	switch action {
	case model.DidInstall, model.DidCreate:
		t.Create++
	case model.DidUpgrade, model.DidConfigure, model.DidReplace:
		t.Update++
	case model.DidDelete, model.DidUninstall:
		t.Delete++
	}
}

// WriteTerraformReport writes the widget report as JSON.
func WriteTerraformReport(w io.Writer, t TerraformReport) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
