package shscript

import "testing"

// What held-out trials 46s69j and 46s69k showed, each cut down.
func TestTrial46s69jkIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// gg-tools' deployment/datahub/install.sh:11 (46s69j's D1): bitnami mysql renders
		// podManagementPolicy: "", which the API server defaults to OrderedReady
		{name: "a chart rendering an empty defaulted enum", script: "helm upgrade --install db ./c -n demo --create-namespace\n",
			files: map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
				"c/templates/sts.yaml": "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  podManagementPolicy: \"\"\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: db, image: busybox}]}\n"},
			want: []string{"chart: ./c", "release: db"}},
	})
}
