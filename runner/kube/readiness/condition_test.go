package readiness

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/spec"
)

// parseCondition builds a condition the way the runner does: from what spec.ParseWaitFor,
// the one grammar, parsed.
func parseCondition(s string) (Condition, error) {
	w, err := spec.ParseWaitFor(s, true)
	if err != nil {
		return Condition{}, err
	}
	return NewCondition(w)
}

func TestNewCondition(t *testing.T) {
	tests := []struct {
		in   string
		want Condition
	}{
		{"delete", Condition{Type: ForDelete}},
		{"condition=Ready", Condition{Type: ForCondition, Name: "Ready"}},
		{"condition=Ready=false", Condition{Type: ForCondition, Name: "Ready", Value: "false", HasValue: true}},
		{"jsonpath={.status.phase}=Running", Condition{Type: ForJSONPath, Expr: "{.status.phase}", Value: "Running", HasValue: true}},
		{"jsonpath=.status.phase=Running", Condition{Type: ForJSONPath, Expr: "{.status.phase}", Value: "Running", HasValue: true}},
		{"jsonpath=status.phase=Running", Condition{Type: ForJSONPath, Expr: "{.status.phase}", Value: "Running", HasValue: true}},
		{"jsonpath={.status.readyReplicas}", Condition{Type: ForJSONPath, Expr: "{.status.readyReplicas}"}},
		{`jsonpath={.status.conditions[?(@.type=="Ready")].status}=True`, Condition{Type: ForJSONPath, Expr: `{.status.conditions[?(@.type=="Ready")].status}`, Value: "True", HasValue: true}},
		// The braced expression ends at its own closing brace: the value
		// may contain braces (issue 11: these once validated and then
		// failed, or lost their value, at run time).
		{"jsonpath={.data.k}=a}b", Condition{Type: ForJSONPath, Expr: "{.data.k}", Value: "a}b", HasValue: true}},
		{"jsonpath={.metadata.annotations.tpl}={{x}}", Condition{Type: ForJSONPath, Expr: "{.metadata.annotations.tpl}", Value: "{{x}}", HasValue: true}},
	}
	for _, tt := range tests {
		got, err := parseCondition(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		got.parsed = nil
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(Condition{})); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.in, diff)
		}
	}
}

// FuzzNewCondition: every string the spec accepts, the runner accepts with
// the same meaning (it renders back to the same wait.for).
func FuzzNewCondition(f *testing.F) {
	for _, s := range []string{"ready", "delete", "condition=Ready", "condition=Ready=false", "jsonpath={.data.k}=a}b",
		"jsonpath={.metadata.annotations.tpl}={{x}}", "jsonpath=status.phase=Running", `jsonpath={.a[?(@.b=="c")].d}=e`,
		"cel=object.status.readyReplicas == object.spec.replicas", "jsonpath={.a['x}']}=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := spec.ParseWaitFor(s, true)
		if err != nil {
			return
		}
		c, err := NewCondition(w)
		if err != nil {
			t.Fatalf("the spec accepts %q (%+v) and the runner rejects it: %v", s, w, err)
		}
		if c.String() != w.String() {
			t.Fatalf("%q: the spec means %q, the runner %q", s, w, c)
		}
	})
}

func obj(name string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "ns", "generation": int64(2)},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func cond(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason}
}

func TestConditionMet(t *testing.T) {
	ready := obj("a", map[string]any{"phase": "Running", "readyReplicas": int64(2), "conditions": []any{cond("Ready", "True", "")}})
	notReady := obj("b", map[string]any{"phase": "Pending", "conditions": []any{cond("Ready", "False", "ContainersNotReady")}})
	stale := obj("c", map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(1)}}})
	bare := obj("d", nil)
	tests := []struct {
		for_    string
		o       *unstructured.Unstructured
		met     bool
		pending string
	}{
		{"condition=Ready", ready, true, ""},
		{"condition=ready", ready, true, ""}, // kubectl compares case-insensitively
		{"condition=Ready", notReady, false, "Ready=False: ContainersNotReady"},
		{"condition=Ready=false", notReady, true, ""},
		{"condition=Ready=FALSE", notReady, true, ""},
		{"condition=Ready", stale, false, "not yet observed for generation 2"},
		{"condition=Ready", bare, false, "no Ready condition yet"},
		{"jsonpath={.status.phase}=Running", ready, true, ""},
		{"jsonpath=.status.phase=Running", notReady, false, "{.status.phase} is Pending"},
		{"jsonpath=status.phase", bare, false, "not set yet"},
		{"jsonpath={.status.readyReplicas}=2", ready, true, ""},
		{"jsonpath={.status.readyReplicas}", ready, true, ""},
		{"jsonpath={.status.conditions[?(@.type==\"Ready\")].status}=True", ready, true, ""},
		{"jsonpath={.status.conditions[?(@.type==\"Ready\")].status}=True", notReady, false, "is False"},
		{"delete", ready, false, "still exists"},
	}
	for _, tt := range tests {
		c, err := parseCondition(tt.for_)
		if err != nil {
			t.Fatalf("parseCondition(%q): %v", tt.for_, err)
		}
		met, pending := c.Met(tt.o)
		if met != tt.met || !strings.Contains(pending, tt.pending) {
			t.Errorf("%s on %s: got (%v, %q), want (%v, containing %q)", tt.for_, tt.o.GetName(), met, pending, tt.met, tt.pending)
		}
	}
}

func TestJSONPathEmptyValue(t *testing.T) {
	c, _ := parseCondition("jsonpath={.status.phase}")
	if met, pending := c.Met(obj("a", map[string]any{"phase": ""})); met || !strings.Contains(pending, "empty") {
		t.Errorf("empty string result: got (%v, %q), want not met, empty", met, pending)
	}
}

func TestEvaluate(t *testing.T) {
	readyCond, _ := parseCondition("condition=Ready")
	del, _ := parseCondition("delete")
	a := obj("a", map[string]any{"conditions": []any{cond("Ready", "False", "ContainersNotReady")}})
	b := obj("b", map[string]any{"conditions": []any{cond("Ready", "True", "")}})
	c := obj("c", nil)

	if done, pending := readyCond.Evaluate(nil); done || pending != "nothing matches yet" {
		t.Errorf("no objects: got (%v, %q), want not yet", done, pending)
	}
	done, pending := readyCond.Evaluate([]*unstructured.Unstructured{a, b, c})
	want := "2 of 3 not ready: pod/a (Ready=False: ContainersNotReady), pod/c (no Ready condition yet)"
	if done || pending != want {
		t.Errorf("got (%v, %q), want (false, %q)", done, pending, want)
	}
	if done, _ := readyCond.Evaluate([]*unstructured.Unstructured{b}); !done {
		t.Error("all ready: want done")
	}
	if done, _ := del.Evaluate(nil); !done {
		t.Error("delete with nothing left: want done")
	}
	if done, pending := del.Evaluate([]*unstructured.Unstructured{a}); done || pending != "1 still present: pod/a" {
		t.Errorf("delete with one left: got (%v, %q)", done, pending)
	}
}
