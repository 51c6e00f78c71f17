package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trial 46zv (low-code builders and photo libraries, run
// once on 2ce5bfb) showed, each cut down.

// D1 (Immich with CloudNativePG): a delete folded into the step that
// makes the object again is said at its own line.
func TestFoldedDeleteSaidAtItsLine(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl delete secret app-db -n db --ignore-not-found\nkubectl create secret generic app-db -n db --from-literal=password=$(openssl rand -hex 8)\n"})
	if !strings.Contains(fmt.Sprint(res.Model.Info), "install.sh:3: delete Secret app-db: it deletes Secret app-db for step secret-app-db") {
		t.Errorf("info %v", res.Model.Info)
	}
}

// D2, D3 (Immich, an instance env file): envsubst says which variables
// it wrote as the script set them; a Secret envsubst writes is named as
// its maker where an apply reads it, not the mkdir before it.
func TestEnvsubstSaysWhatItWrote(t *testing.T) {
	res := importScript(t, map[string]string{"site.env": "NAMESPACE=photos\n", "secret.tmpl": "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: $NAMESPACE}\nstringData: {p: x}\n",
		"ns.tmpl":    "apiVersion: v1\nkind: Namespace\nmetadata: {name: $NAMESPACE, labels: {owner: $OWNER}}\n",
		"install.sh": "#!/bin/bash\nset -euo pipefail\nset -a\nsource site.env\nset +a\nenvsubst < ns.tmpl | kubectl apply -f -\nmkdir -p out\nenvsubst < secret.tmpl > out/secret.yaml\nkubectl apply -f out/secret.yaml\n"})
	all := fmt.Sprint(res.Model.Info, res.Model.NotCarried)
	for _, want := range []string{"$OWNER are khook variables (${NAME}); $NAMESPACE are written as the script sets them at import", "made by the envsubst at install.sh:8"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in %s", want, all)
		}
	}
}

// N1 (Immich and the 1Password operator): for _ in $(seq 1 30); do if
// kubectl get secret x; then break; fi; sleep 2; done is the wait for the
// Secret, as until kubectl get … is.
func TestRetryPollIsAWait(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl create namespace immich\nfor _ in $(seq 1 30); do\n  if kubectl get secret creds -n immich &>/dev/null; then\n    echo ready\n    break\n  fi\n  sleep 2\ndone\n"})
	if spec := string(res.Spec); !strings.Contains(spec, "\"on\": secret/creds") || fateAt(res.Model, 5) != "step" {
		t.Errorf("line 5: %q\n%s", fateAt(res.Model, 5), spec)
	}
}
