package shscript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// What held-out trial 46s67q showed, each cut down (fixer 46s68x).
func TestTrial46s68xIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// sierra's deploy-datadog.sh (D1): a guard in a function called from
		// the case branch the known subject picks is the script's
		{name: "an exit 1 guard in a function called from a decided case branch",
			script: "check() { if [[ -z \"${KEY:-}\" ]]; then echo \"KEY not set\"; exit 1; fi; }\nmain() { case \"${1:-}\" in deploy) check\n  kubectl create secret generic s --from-literal=k=\"$KEY\" -n x --dry-run=client -o yaml | kubectl apply -f - ;; esac; }\nmain deploy\n",
			want:   []string{"KEY: {type: string, secret: true, required: true, description: \"the script stops without it"}},
		// bilal's deploy-datadog.sh (D2): the note names the spec's variable
		{name: "a secret set from another variable's default names the spec's variable",
			script: "API_KEY=\"${DD_API_KEY:-${DATADOG_API_KEY:-}}\"\nif [[ -z \"$API_KEY\" ]]; then echo missing >&2; exit 1; fi\nkubectl create secret generic s --from-literal=k=\"$API_KEY\" -n x --dry-run=client -o yaml | kubectl apply -f -\n",
			want:   []string{"API_KEY: {type: string, secret: true, required: true", "give it as KHOOK_SECRET_API_KEY"},
			never:  []string{"KHOOK_SECRET_DD_API_KEY"}},
		// vital's operator-install.sh (D3): an until loop on a jsonpath's value, with a counter
		{name: "until [[ $n == 0 || $phase == V ]] polling a jsonpath",
			script: "retries=50\nuntil [[ $retries == 0 || $phase == \"Succeeded\" ]]; do\n  phase=$(kubectl get csv -n olm packageserver -o jsonpath='{.status.phase}' 2>/dev/null || echo \"Waiting\")\n  sleep 1; retries=$((retries - 1))\ndone\nif [ $retries == 0 ]; then echo failed; exit 1; fi\nkubectl rollout status -w deployment/packageserver --namespace=olm\n",
			want:   []string{"timeout: 50s\n    wait:\n      for: jsonpath={.status.phase}=Succeeded\n      \"on\": csv/packageserver\n      namespace: olm", "status: deployment/packageserver"}},
		// vital's deploy-datadog.sh (D4), its argument not given: the token of one variable with text around it
		{name: "$(echo -n \"$X $X\" | base64) of a variable",
			script: "CLUSTER_NAME=$1\nSHARED=$(echo -n \"${CLUSTER_NAME} ${CLUSTER_NAME}\" | base64)\nkubectl apply -f - <<EOT\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: x}\ndata: {token: ${SHARED}}\nEOT\n",
			want:   []string{`data: {token: ${ARG1 | printf "%[1]s %[1]s" | b64enc}}`},
			never:  []string{"SHARED:"}},
	})
}

// vital's deploy-datadog.sh run as the import is given its arguments
// (D4): the argument a value is encoded from is a variable whose default
// it is, and the value its pipeline, never a secret to compute by hand.
func TestTrial46s68xBase64OfArgument(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\nCLUSTER_NAME=$1\nSHARED=$(echo -n \"${CLUSTER_NAME} ${CLUSTER_NAME} ${CLUSTER_NAME}\" | base64)\nkubectl apply -f - <<EOT\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: x}\ndata: {token: ${SHARED}}\nEOT\n"
	if err := os.WriteFile(filepath.Join(dir, "d.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Import("d.sh", Options{Dir: dir, Args: []string{"demo"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := importer.Validate(res.Model, res.Spec); err != nil {
		t.Fatalf("%v\n%s", err, res.Spec)
	}
	for _, w := range []string{`CLUSTER_NAME: {type: string, default: "demo"`, `data: {token: ${CLUSTER_NAME | printf "%[1]s %[1]s %[1]s" | b64enc}}`} {
		if !strings.Contains(string(res.Spec), w) {
			t.Errorf("want %q in\n%s", w, res.Spec)
		}
	}
	if strings.Contains(string(res.Spec), "SHARED") {
		t.Errorf("a secret to give:\n%s", res.Spec)
	}
}
