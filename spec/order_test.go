package spec

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func orderStep(name string, needs ...string) *Step {
	return &Step{Name: name, Needs: needs, Path: "steps." + name,
		Rollout: &Rollout{Restart: "deployment/" + name, Namespace: "default"}}
}

func stepNames(steps []*Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name)
	}
	return out
}

func TestSortedRespectsNeedsAndFileOrder(t *testing.T) {
	steps := []*Step{orderStep("d", "c"), orderStep("a"), orderStep("c", "a", "b"), orderStep("b"), orderStep("e")}
	if diff := cmp.Diff([]string{"a", "b", "c", "d", "e"}, stepNames(Sorted(steps))); diff != "" {
		t.Errorf("Sorted (-want +got):\n%s", diff)
	}
}

func TestSortedKeepsEveryStepOfACycle(t *testing.T) {
	steps := []*Step{orderStep("x", "y"), orderStep("y", "x"), orderStep("z"), orderStep("w", "ghost")}
	if diff := cmp.Diff([]string{"z", "w", "x", "y"}, stepNames(Sorted(steps))); diff != "" {
		t.Errorf("Sorted (-want +got):\n%s", diff)
	}
}
