package report

import (
	"encoding/json"
	"io"
)

// TerraformReport is GitLab's artifacts:reports:terraform format, which the
// merge request widget shows as "N to add, N to change, N to delete".
type TerraformReport struct {
	Create int `json:"create"`
	Update int `json:"update"`
	Delete int `json:"delete"`
}

// TerraformReportOf maps predicted actions onto the widget's three counts:
// install/create add, upgrade/configure change, delete deletes. Job runs
// and restarts act on every apply and are not counted (ChangesState).
func TerraformReportOf(p *Plan) TerraformReport {
	var t TerraformReport
	for _, s := range p.Steps {
		switch s.Action {
		case ActionInstall, ActionCreate:
			t.Create++
		case ActionUpgrade, ActionConfigure:
			t.Update++
		case ActionDelete:
			t.Delete++
		}
	}
	return t
}

// WriteTerraformReport writes the plan's widget report as JSON.
func WriteTerraformReport(w io.Writer, p *Plan) error {
	b, err := json.Marshal(TerraformReportOf(p))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
