package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
)

// --warnings-as-errors fails a step on the API server's warnings only:
// khook's own (a CRD kept) say whose they are and never fail it.
func TestWarningsAsErrorsIsTheAPIServersOnly(t *testing.T) {
	r := &run{Engine: &Engine{WarningsAsErrors: true}}
	var w kube.Warnings
	ctx := kube.WithWarnings(context.Background(), &w)
	kube.Warn(ctx, "CRD widgets.example.com", "the upgrade keeps it")
	ws := r.warnings(&w)
	if len(ws) != 1 || ws[0].From != model.WarnerKhook {
		t.Fatalf("warnings %+v, want khook's one", ws)
	}
	if err := r.warningsAsErrors(ws); err != nil {
		t.Errorf("khook's own warning failed the step: %v", err)
	}
	ws = append(ws, model.Warning{From: model.WarnerAPIServer, Object: "Deployment shop/web", Message: "deprecated label"})
	err := r.warningsAsErrors(ws)
	if err == nil || !strings.Contains(err.Error(), "Deployment shop/web: deprecated label") || strings.Contains(err.Error(), "widgets") {
		t.Errorf("warnings-as-errors = %v, want the API server's warning alone", err)
	}
}
