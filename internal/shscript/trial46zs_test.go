package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trial 46zs (LLM chat apps and Fineract installers, run once
// on e1c4ecb) showed, each cut down.

// D1 (Langflow on GKE): $(echo -n "literal" | base64) in a Secret's data is
// a secret: the note that names the line never quotes it.
func TestBase64LiteralIsMasked(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\ncat <<EOT | kubectl apply -f -\napiVersion: v1\nkind: Secret\nmetadata: {name: app}\ndata:\n  API_KEY: $(echo -n \"Sup3rS3cretKey\" | base64)\nEOT\n"})
	if all := fmt.Sprint(res.Model.NotCarried, res.Model.Info) + string(res.Spec); strings.Contains(all, "Sup3rS3cretKey") || !strings.Contains(all, "***") {
		t.Errorf("notes %s", all)
	}
}

// D2 (LibreChat on k3s): a chart given by a variable whose default is a
// chart on disk is that chart, at its path from the spec.
func TestChartVariableDefaultOnDisk(t *testing.T) {
	res := importScript(t, map[string]string{"helm/librechat/Chart.yaml": "apiVersion: v2\nname: librechat\nversion: 1.0.0\n",
		"install.sh": "#!/bin/bash\nset -e\nCHART_PATH=\"${CHART_PATH:-./helm/librechat}\"\nhelm upgrade --install librechat \"$CHART_PATH\" -n chat --create-namespace\n"})
	if spec := string(res.Spec); !strings.Contains(spec, "chart: helm/librechat") && !strings.Contains(spec, "chart: ./helm/librechat") {
		t.Errorf("spec:\n%s", spec)
	}
	if fateAt(res.Model, 4) != "step" {
		t.Errorf("line 4: %q", fateAt(res.Model, 4))
	}
}

// N2 (Dify): kubectl config use-context $(kubectl config current-context)
// only touches the local kubeconfig: read-only, not "write it by hand".
func TestConfigWithComputedArgument(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl config use-context $(kubectl config current-context)\nkubectl create namespace dify\n"})
	if fateAt(res.Model, 3) != "read-only,read-only" && fateAt(res.Model, 3) != "read-only" {
		t.Errorf("line 3: %q %v", fateAt(res.Model, 3), res.Model.NotCarried)
	}
}

// N4 (Fineract): kubectl create secret … || echo "exists" makes the Secret
// once and keeps it: skipIf: exists, so a re-run keeps its data.
func TestCreateSecretOrEchoKeepsIt(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl create secret generic db -n fin --from-literal=password=$(openssl rand -hex 16) 2>/dev/null || echo \"Secret already exists\"\nkubectl create namespace other || true\n"})
	spec := string(res.Spec)
	if strings.Count(spec, "\n      skipIf: exists") != 1 {
		t.Errorf("spec:\n%s", spec)
	}
}
