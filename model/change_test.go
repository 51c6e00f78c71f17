package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangesSentence(t *testing.T) {
	cm := func(a Did, name string) Change {
		return Change{Action: a, Kind: "ConfigMap", Namespace: "demo", Name: name}
	}
	for _, tc := range []struct {
		steps []StepResult
		want  string
	}{
		{nil, "No changes."},
		{[]StepResult{{Type: "apply", Changes: []Change{cm(DidUnchanged, "a")}}, {Type: "job", Changes: []Change{{Action: DidRun, Kind: "Job", Name: "m"}}}},
			"No changes (Apply: 1 unchanged; Job: 1 ran)."},
		{[]StepResult{
			{Type: "apply", Changes: []Change{cm(DidCreate, "a"), cm(DidCreate, "b"), cm(DidConfigure, "c"), cm(DidUnchanged, "d")}},
			{Type: "helm", Changes: []Change{{Action: DidUpgrade, Kind: KindRelease, Name: "x"}}},
		}, "Changes: Apply: 2 created, 1 configured, 1 unchanged; Helm: 1 upgraded."},
	} {
		r := &Results{Steps: tc.steps}
		if got := ChangesSentence(r); got != tc.want {
			t.Errorf("ChangesSentence = %q, want %q", got, tc.want)
		}
		b, _ := json.Marshal(r)
		if want := `"changes":` + map[bool]string{true: "true", false: "false"}[r.Changed()]; !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
}

// A retry that finds unchanged what an earlier attempt created still
// reports it created.
func TestMergeChangesKeepsEarlierAttemptsChanges(t *testing.T) {
	a := Change{Action: DidCreate, Kind: "ConfigMap", Namespace: "n", Name: "a"}
	b := Change{Action: DidCreate, Kind: "ConfigMap", Namespace: "n", Name: "b"}
	bUnchanged, c := b, Change{Action: DidUnchanged, Kind: "ConfigMap", Namespace: "n", Name: "c"}
	bUnchanged.Action = DidUnchanged
	got := MergeChanges([]Change{a, b}, []Change{bUnchanged, c})
	if d := cmp.Diff([]Change{b, c, a}, got); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
}
