package spec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseWaitFor(t *testing.T) {
	tests := []struct {
		in          string
		allowDelete bool
		want        WaitFor
		err         bool
	}{
		{in: "delete", allowDelete: true, want: WaitFor{Kind: WaitDelete}},
		{in: "delete", err: true},
		{in: "condition=Ready", want: WaitFor{Kind: WaitCondition, Condition: "Ready"}},
		{in: "condition=Ready=False", want: WaitFor{Kind: WaitCondition, Condition: "Ready", Value: "False", HasValue: true}},
		{in: "jsonpath={.status.phase}=Running", want: WaitFor{Kind: WaitJSONPath, JSONPath: "{.status.phase}", Value: "Running", HasValue: true}},
		{in: "jsonpath=.status.phase=Running", want: WaitFor{Kind: WaitJSONPath, JSONPath: "{.status.phase}", Value: "Running", HasValue: true}},
		{in: "jsonpath=status.phase=Running", want: WaitFor{Kind: WaitJSONPath, JSONPath: "{.status.phase}", Value: "Running", HasValue: true}},
		{in: "jsonpath={.status.loadBalancer.ingress}", want: WaitFor{Kind: WaitJSONPath, JSONPath: "{.status.loadBalancer.ingress}"}},
		{in: `jsonpath={.status.conditions[?(@.type=="Ready")].status}=True`, want: WaitFor{Kind: WaitJSONPath, JSONPath: `{.status.conditions[?(@.type=="Ready")].status}`, Value: "True", HasValue: true}},
		{in: `jsonpath={.metadata.annotations['a\}b']}`, want: WaitFor{Kind: WaitJSONPath, JSONPath: `{.metadata.annotations['a\}b']}`}},
		{in: `jsonpath=.status.conditions[?(@.type=="Ready")].status=True`, err: true},
		{in: "jsonpath={.status", err: true},
		{in: "jsonpath={.a}x", err: true},
		{in: "jsonpath=", err: true},
		{in: "jsonpath={.a}=", err: true},
		{in: "condition=", err: true},
		{in: "condition=Ready=", err: true},
		{in: "ready,", err: true},
		{in: "cel=1", err: true},
		{in: "", err: true},
	}
	for _, tt := range tests {
		got, err := ParseWaitFor(tt.in, tt.allowDelete)
		if (err != nil) != tt.err {
			t.Errorf("%q: err = %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); !tt.err && diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.in, diff)
		}
		if !tt.err && got.Kind != WaitJSONPath {
			if again, _ := ParseWaitFor(got.String(), true); again != got {
				t.Errorf("%q: String() %q does not round-trip", tt.in, got.String())
			}
		}
	}
}

func TestParseChart(t *testing.T) {
	for in, want := range map[string]ChartRef{
		"cilium":                              {Kind: ChartRepo, Name: "cilium"},
		"cilium:1.18.4":                       {Kind: ChartRepo, Name: "cilium", Version: "1.18.4"},
		"oci://ghcr.io/org/charts/app":        {Kind: ChartOCI, Name: "oci://ghcr.io/org/charts/app"},
		"oci://ghcr.io/org/charts/app:1.2.3":  {Kind: ChartOCI, Name: "oci://ghcr.io/org/charts/app", Version: "1.2.3"},
		"oci://localhost:5000/charts/app":     {Kind: ChartOCI, Name: "oci://localhost:5000/charts/app"},
		"oci://localhost:5000/charts/app:0.1": {Kind: ChartOCI, Name: "oci://localhost:5000/charts/app", Version: "0.1"},
		"oci://ghcr.io/app@sha256:abc":        {Kind: ChartOCI, Name: "oci://ghcr.io/app@sha256:abc", Digest: "sha256:abc"},
		"oci://ghcr.io/app:1.0@sha256:abc":    {Kind: ChartOCI, Name: "oci://ghcr.io/app@sha256:abc", Version: "1.0", Digest: "sha256:abc"},
		"./charts/app":                        {Kind: ChartLocal, Name: "./charts/app"},
		"../app-1.2.3.tgz":                    {Kind: ChartLocal, Name: "../app-1.2.3.tgz"},
		"/abs/app":                            {Kind: ChartLocal, Name: "/abs/app"},
	} {
		if diff := cmp.Diff(want, ParseChart(in)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", in, diff)
		}
	}
}

func TestParseResource(t *testing.T) {
	for in, ok := range map[string]bool{
		"pods": true, "deployment/x": true, "deploy/x": true, "deployments.apps/x": true,
		"daemonset/aws-node": true, "storageclass/gp3": true, "Deployment/x": true,
		"": false, "deploy/": false, "/x": false, "a/b/c": false, "deploy/Bad_Name": false, "pods x": false,
	} {
		if _, err := ParseResource(in, false); (err == nil) != ok {
			t.Errorf("%q: err = %v, want ok=%v", in, err, ok)
		}
	}
	if _, err := ParseResource("pods", true); err == nil {
		t.Error("a bare type must fail when a name is needed")
	}
}

func TestCondition(t *testing.T) {
	vars := map[string]string{"ENV": "prod", "N": "3"}
	for expr, want := range map[string]bool{
		`vars.ENV == "prod"`:                        true,
		`vars.get("ENV", "dev") == "prod"`:          true,
		`vars.get("NOPE", "dev") == "dev"`:          true,
		`has(vars.ENV) && !has(vars.NOPE)`:          true,
		`vars.ENV in ["prod", "staging"]`:           true,
		`vars.ENV.startsWith("pr")`:                 true,
		`int(vars.N) > 2`:                           true,
		`vars.ENV.matches("^p.*d$") ? false : true`: false,
		`"ENV" in vars`:                             true,
	} {
		got, err := Condition(expr, vars)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", expr, got, err, want)
		}
	}
	for expr, msg := range map[string]string{
		`vars.NOPE == "x"`:     "variable NOPE is not set",
		`vars.ENV`:             "not a bool",
		`vars.ENV ==`:          "invalid expression",
		`env.HOME == "x"`:      "undeclared reference",
		`vars.get("A") == "x"`: "invalid expression",
	} {
		if _, err := Condition(expr, vars); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: err = %v, want %q", expr, err, msg)
		}
	}
}
