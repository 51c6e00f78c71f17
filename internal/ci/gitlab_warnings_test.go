package ci

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/model"
)

// GitLab's log section of a step lists its warnings, each saying whose it
// is (the API server's as "warning:", khook's as "warning from khook:"),
// for a plan and apply's results alike.
func TestGitLabSectionsSayWhoseWarnings(t *testing.T) {
	ws := []model.Warning{
		{From: model.WarnerAPIServer, Object: "Deployment shop/web", Message: "deprecated label"},
		{From: model.WarnerKhook, Object: "PersistentVolumeClaim shop/data", Message: "pruning keeps it: its data"},
	}
	for name, oc := range map[string]*outcome{
		"plan":    {plan: &model.Plan{Steps: []model.PlanStep{{Name: "web", Type: "apply", Action: model.ActionConfigure, Warnings: ws}}}},
		"results": {results: &model.Results{Steps: []model.StepResult{{Name: "web", Type: "apply", Status: model.StatusOK, Attempts: 1, Warnings: ws}}}},
	} {
		var out bytes.Buffer
		r := &runState{out: &out, timeline: newTimeline()}
		r.opts.Now = func() time.Time { return time.Unix(0, 0) }
		gitlabSink{plainSink{r}}.sections(oc)
		for _, want := range []string{
			"warning: Deployment shop/web: deprecated label\n",
			"warning from khook: PersistentVolumeClaim shop/data: pruning keeps it: its data\n",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: the section lacks %q:\n%s", name, want, out.String())
			}
		}
	}
}
