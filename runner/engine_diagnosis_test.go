package runner

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
)

// A failed step's diagnosis reaches the results, its log lines masked.
func TestDiagnosisIsKeptAndMasked(t *testing.T) {
	r := redact.New()
	r.Add("hunter2")
	f := newFake().on("web", func(context.Context, int) (Outcome, error) {
		return Outcome{Diagnosis: &model.Diagnosis{Reason: "pod web-1 CrashLoopBackOff",
				Pods: []model.DiagnosedPod{{Name: "web-1", Containers: []model.DiagnosedContainer{{Name: "web", Logs: []string{"password=hunter2"}}}}}}},
			errors.New("timed out")
	})
	e := engine(f, step("web"))
	e.Redactor = r
	got := e.Run(context.Background())
	d := got[0].Diagnosis
	if d == nil || d.Reason != "pod web-1 CrashLoopBackOff" {
		t.Fatalf("diagnosis = %+v", d)
	}
	if diff := cmp.Diff([]string{"password=***"}, d.Pods[0].Containers[0].Logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}
