package shscript

import (
	"strings"
	"testing"
)

// What held-out trials 46zza–46zzc (scripts: KubeVirt and home
// automation, blue-green and tenant provisioning, GPU setups and course
// projects; run once on dd3bb3d) showed, cut down.

// 46zzb D3: an if/elif on what the cluster holds whose branches patch the
// same Service to blue or to green: one runs, never both; each is carried
// under a when: on a required variable.
func TestRivalBranchesOnClusterState(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
if kubectl get deployment web-blue | grep "2/2" &> /dev/null; then
    kubectl patch service web -p '{"spec":{"selector":{"color":"green"}}}'
elif kubectl get deployment web-green | grep "2/2" &> /dev/null; then
    kubectl patch service web -p '{"spec":{"selector":{"color":"blue"}}}'
else
    exit 1
fi
`})
	st := res.Model.Steps
	if len(st) != 2 || st[0].Out.When != `vars.IF_WEB_BLUE == "true"` || st[1].Out.When != `!(vars.IF_WEB_BLUE == "true") && vars.IF_WEB_GREEN == "true"` {
		t.Errorf("%s", res.Spec)
	}
	if !strings.Contains(string(res.Spec), "IF_WEB_GREEN: {type: string, required: true") {
		t.Errorf("%s", res.Spec)
	}
}
