package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseWaitForReadyAndCEL(t *testing.T) {
	for in, want := range map[string]WaitFor{
		"ready": {Kind: WaitReady},
		"cel=object.status.readyReplicas == object.spec.replicas": {Kind: WaitCEL, CEL: "object.status.readyReplicas == object.spec.replicas"},
		`cel=object.status.phase == "Active"`:                     {Kind: WaitCEL, CEL: `object.status.phase == "Active"`},
		`cel=has(object.data) && object.data.ready == "yes"`:      {Kind: WaitCEL, CEL: `has(object.data) && object.data.ready == "yes"`},
	} {
		for _, allowDelete := range []bool{true, false} {
			got, err := ParseWaitFor(in, allowDelete)
			if err != nil || got != want {
				t.Errorf("ParseWaitFor(%q) = %+v, %v; want %+v", in, got, err, want)
			}
			if again, _ := ParseWaitFor(got.String(), true); again != got {
				t.Errorf("%q does not round-trip: %q", in, got.String())
			}
		}
	}
}

func TestParseWaitForCELErrors(t *testing.T) {
	for in, want := range map[string]string{
		"cel=":                         "has no expression",
		"cel=object.status.ready":      "evaluates to dyn, not a bool",
		"cel=object.spec.replicas + 1": "not a bool",
		"cel=obj.status.ready == true": "undeclared reference to 'obj'",
		"cel=object.status.ready ==":   "invalid expression",
	} {
		_, err := ParseWaitFor(in, true)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseWaitFor(%q) error = %v; want it to contain %q", in, err, want)
		}
	}
}

func TestValidateCELWaitPointsAtField(t *testing.T) {
	src := `apiVersion: khook.io/v1
kind: Khook
metadata: {name: t}
steps:
  - name: w
    wait: {on: deployment/web, for: "cel=object.status.ready"}
  - name: a
    apply: {manifests: [{file: a.yaml}], waitFor: ready}
`
	file := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(LoadOptions{Files: []string{file}})
	if err == nil || !strings.Contains(err.Error(), "spec.yaml:6") || !strings.Contains(err.Error(), "not a bool") {
		t.Fatalf("Load error = %v; want spec.yaml:6 ... not a bool", err)
	}
	if strings.Contains(err.Error(), "waitFor") {
		t.Errorf("waitFor: ready is valid but was reported: %v", err)
	}
}
