package kube

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestParseCondition(t *testing.T) {
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
	}
	for _, tt := range tests {
		got, err := ParseCondition(tt.in)
		if err != nil {
			t.Errorf("ParseCondition(%q): %v", tt.in, err)
			continue
		}
		got.parsed = nil
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(Condition{})); diff != "" {
			t.Errorf("ParseCondition(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseConditionErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "unknown condition",
		"readyish":          "unknown condition",
		"delete=x":          "delete takes no value",
		"condition=":        "names no condition",
		"condition=Ready=":  "empty value",
		"jsonpath=":         "no jsonpath expression",
		"jsonpath={.a":      "no closing brace",
		"jsonpath={.a}x":    "unexpected",
		"jsonpath={.a[}":    "invalid jsonpath",
		"jsonpath={.a.b}=":  "empty value",
		"create":            "unknown condition",
		"condition=Ready=x": "",
	} {
		_, err := ParseCondition(in)
		switch {
		case want == "" && err != nil:
			t.Errorf("ParseCondition(%q): unexpected error %v", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("ParseCondition(%q) = %v, want an error containing %q", in, err, want)
		}
	}
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
		c, err := ParseCondition(tt.for_)
		if err != nil {
			t.Fatalf("ParseCondition(%q): %v", tt.for_, err)
		}
		met, pending := c.Met(tt.o)
		if met != tt.met || !strings.Contains(pending, tt.pending) {
			t.Errorf("%s on %s: got (%v, %q), want (%v, containing %q)", tt.for_, tt.o.GetName(), met, pending, tt.met, tt.pending)
		}
	}
}

func TestJSONPathEmptyValue(t *testing.T) {
	c, _ := ParseCondition("jsonpath={.status.phase}")
	if met, pending := c.Met(obj("a", map[string]any{"phase": ""})); met || !strings.Contains(pending, "empty") {
		t.Errorf("empty string result: got (%v, %q), want not met, empty", met, pending)
	}
}

func TestEvaluate(t *testing.T) {
	readyCond, _ := ParseCondition("condition=Ready")
	del, _ := ParseCondition("delete")
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

func TestSplitResourceArg(t *testing.T) {
	for in, want := range map[string][2]string{
		"pods":                 {"pods", ""},
		"deploy/web":           {"deploy", "web"},
		"deployments.apps/web": {"deployments.apps", "web"},
		"Deployment/web":       {"Deployment", "web"},
	} {
		typ, name, err := SplitResourceArg(in)
		if err != nil || typ != want[0] || name != want[1] {
			t.Errorf("SplitResourceArg(%q) = %q, %q, %v; want %q, %q", in, typ, name, err, want[0], want[1])
		}
	}
	for _, in := range []string{"", "/web", "deploy/", "a/b/c"} {
		if _, _, err := SplitResourceArg(in); err == nil {
			t.Errorf("SplitResourceArg(%q): want an error", in)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		2 * time.Minute: "2m", 90 * time.Minute: "1h30m", time.Hour: "1h", 1500 * time.Millisecond: "1.5s", 3 * time.Second: "3s",
		2*time.Minute + 5*time.Second: "2m5s",
	} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
