package shscript

import (
	"slices"
	"strings"
	"testing"
)

// What held-out trials 46s69j and 46s69k showed, each cut down.
func TestTrial46s69jkIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// gg-tools' deployment/datahub/install.sh:11 (46s69j's D1): bitnami mysql renders
		// podManagementPolicy: "", which the API server defaults to OrderedReady
		{name: "a chart rendering an empty defaulted enum", script: "helm upgrade --install db ./c -n demo --create-namespace\n",
			files: map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
				"c/templates/sts.yaml": "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  podManagementPolicy: \"\"\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: db, image: busybox}]}\n"},
			want: []string{"chart: ./c", "release: db"}},
		// rhinops' core-dns/patch.sh:4-5 (46s69k's D1): delete a ConfigMap, then apply it
		// from a file: folded into the apply, as with kubectl create configmap
		{name: "delete configmap, then apply its file", script: "kubectl delete configmap coredns -n kube-system\nkubectl apply -f cm.yaml -n kube-system\n",
			files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: coredns, namespace: kube-system}\ndata: {a: b}\n"},
			want:  []string{"helm/kubectl commands: 2, of which 1 became steps, 1 were folded into steps", "onImmutable: recreate\n    apply:\n      manifests:\n        - file: ./cm.yaml"}},
		// data-engineering-toolkit's action_execution.sh:3-9 (46s69j's D3): a case decided
		// at import takes its exit branch, the commands only in a function it would call
		{name: "a decided case that exits", script: "start() { kubectl create namespace demo; }\nX=\"\"\ncase $X in\n  start) start ;;\n  *) echo bad; exit 1 ;;\nesac\n",
			notCarried: []string{"decided at import, and the script stops there with a failure (exit): what comes after it is not carried; import with the value of a branch that goes on"}},
	})
}

// TestTrial46s69jSourceArgs: data-engineering-toolkit's scripts/datahub.sh:6
// (46s69j's D2): `source entry.sh "$@"` gives the file its own positional
// parameters, and the caller's come back after it, so the file's shift
// leaves the caller's $1; without arguments the file's shift is the caller's.
func TestTrial46s69jSourceArgs(t *testing.T) {
	script := "#!/bin/bash\nset -e\nsource ./entry.sh \"$@\"\nstart() { kubectl create namespace demo; }\ncase $1 in\n  start) start ;;\n  *) echo \"invalid action $1\"; exit 1 ;;\nesac\n"
	entry := "ACTION=\"$1\"\nshift\nwhile [ $# -gt 0 ]; do shift; done\n"
	res := importScript(t, map[string]string{"install.sh": script, "entry.sh": entry}, "start", "-b", ".")
	if !strings.Contains(string(res.Spec), "name: namespace-demo") {
		t.Errorf("with arguments: want the namespace step in\n%s", res.Spec)
	}
	script = strings.Replace(script, `source ./entry.sh "$@"`, "source ./entry.sh", 1)
	res = importScript(t, map[string]string{"install.sh": script, "entry.sh": entry}, "start", "-b", ".")
	if strings.Contains(string(res.Spec), "name: namespace-demo") {
		t.Errorf("without arguments: the file's shift is the caller's, so the case exits; got\n%s", res.Spec)
	}
}

// TestTrial46s69kLiveObject: rhinops' core-dns/patch.sh:5 (46s69k's D2): the
// applied file is an object exported from a cluster, resourceVersion and
// all, which the API server refuses to create: said at the line.
func TestTrial46s69kLiveObject(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl delete configmap coredns -n kube-system\nkubectl apply -f cm.yaml -n kube-system\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\n  namespace: kube-system\n  resourceVersion: \"5049600\"\n  uid: c9da60fe\ndata: {a: b}\n"})
	if lines := infoLines(res.Model, "the API server refuses to create an object with a resourceVersion"); !slices.Equal(lines, []int{4}) {
		t.Errorf("said at lines %v, want [4]", lines)
	}
}
