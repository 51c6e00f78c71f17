package dispatch

import (
	"context"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

func TestEveryStepTypeHasAnExecutor(t *testing.T) {
	d := New(nil, t.TempDir(), nil)
	defer d.Close()
	for _, typ := range spec.StepTypes {
		if d.byType[typ] == nil {
			t.Errorf("no executor for %s steps", typ)
		}
	}
}

func TestStepWithoutActionIsAnError(t *testing.T) {
	d := New(nil, t.TempDir(), nil)
	defer d.Close()
	_, err := d.Execute(context.Background(), &spec.Step{Name: "empty"})
	if err == nil || !strings.Contains(err.Error(), "step empty has no action") {
		t.Errorf("error = %v; want one naming the step", err)
	}
}
