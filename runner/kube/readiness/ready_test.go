package readiness

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

func yamlObj(t *testing.T, src string) *unstructured.Unstructured {
	t.Helper()
	// util/json keeps integers int64, as objects from the API server are.
	var m map[string]any
	j, err := yaml.YAMLToJSON([]byte(src))
	if err == nil {
		err = json.Unmarshal(j, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestReady(t *testing.T) {
	tests := []struct {
		name, src string
		ready     bool
		why       string // substring of the reason when not ready
	}{
		{"configmap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}", true, ""},
		{"deployment available", `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, generation: 1}
spec: {replicas: 2}
status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2,
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]}`, true, ""},
		{"deployment scaling", `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, generation: 2}
spec: {replicas: 3}
status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}`, false, "InProgress"},
		{"crd established", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: w.x}
status: {conditions: [{type: NamesAccepted, status: "True"}, {type: Established, status: "True"}]}`, true, ""},
		{"crd not yet", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: w.x}
status: {conditions: [{type: Established, status: "False"}]}`, false, ""},
		{"namespace active", "apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\nstatus: {phase: Active}", true, ""},
		{"namespace terminating", "apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\nstatus: {phase: Terminating}", false, "phase Terminating"},
		{"no status", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s}", true, ""},
		{"custom ready", "apiVersion: x/v1\nkind: W\nmetadata: {name: w}\nstatus: {conditions: [{type: Ready, status: \"True\"}]}", true, ""},
		{"custom not ready", "apiVersion: x/v1\nkind: W\nmetadata: {name: w}\nstatus: {conditions: [{type: Ready, status: \"False\", reason: Pulling}]}", false, "Ready=False: Pulling"},
		{"custom available", "apiVersion: x/v1\nkind: W\nmetadata: {name: w}\nstatus: {conditions: [{type: Available, status: \"True\"}]}", true, ""},
		{"custom stale generation", "apiVersion: x/v1\nkind: W\nmetadata: {name: w, generation: 3}\nstatus: {observedGeneration: 2, conditions: [{type: Ready, status: \"True\"}]}", false, "generation 3"},
		{"pv bound", "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: p}\nstatus: {phase: Bound}", true, ""},
		{"custom stalled", "apiVersion: x/v1\nkind: W\nmetadata: {name: w}\nstatus: {conditions: [{type: Stalled, status: \"True\", reason: Broken, message: bad}]}", false, "Failed"},
		{"custom other status", "apiVersion: x/v1\nkind: W\nmetadata: {name: w}\nstatus: {size: 3}", true, ""},
	}
	for _, tt := range tests {
		ready, why := Ready(yamlObj(t, tt.src))
		if ready != tt.ready || !strings.Contains(why, tt.why) {
			t.Errorf("%s: Ready = %v, %q; want %v, %q", tt.name, ready, why, tt.ready, tt.why)
		}
	}
}

func TestCELCondition(t *testing.T) {
	c, err := parseCondition("cel=object.status.readyReplicas == object.spec.replicas")
	if err != nil {
		t.Fatal(err)
	}
	if c.Type != ForCEL || c.String() != "cel=object.status.readyReplicas == object.spec.replicas" {
		t.Errorf("parsed %+v as %q", c, c)
	}
	for src, want := range map[string]string{
		"kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 2}\nstatus: {readyReplicas: 2}": "",
		"kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 2}\nstatus: {readyReplicas: 1}": "expression is false",
		"kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 2}\nstatus: {}":                 "field readyReplicas not set yet",
		"kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 2}":                             "field status not set yet",
	} {
		met, why := c.Met(yamlObj(t, src))
		if met != (want == "") || why != want {
			t.Errorf("%s\n  Met = %v, %q; want %q", src, met, why, want)
		}
	}
	// A Condition built by hand compiles on first use.
	if met, _ := (Condition{Type: ForCEL, CEL: `object.data.a == "b"`}).Met(yamlObj(t, "data: {a: b}")); !met {
		t.Error("hand-built cel condition not met")
	}
}

func TestParseReadyAndCELErrors(t *testing.T) {
	for in, want := range map[string]string{
		"ready=true":           "is not a wait condition",
		"cel=":                 "has no expression",
		"cel=object.spec":      "not a bool",
		"cel=self.status == 1": "undeclared reference to 'self'",
		"readyish":             "is not a wait condition",
	} {
		if _, err := parseCondition(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseCondition(%q) = %v; want %q", in, err, want)
		}
	}
	if c, err := parseCondition("ready"); err != nil || c.Type != ForReady || c.String() != "ready" {
		t.Errorf("ready: %+v, %v", c, err)
	}
}
