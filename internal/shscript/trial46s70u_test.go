package shscript

import (
	"testing"

	"github.com/khook/khook/internal/importer"
)

// What held-out trial 46s70u (on 62104ab) showed, cut down.
func TestTrial46s70uIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// D1, microsoft/mindaro's bridge-quickstart.sh:94-106: under a condition the run decides,
		// an if decided at import whose else calls a function that exits ends the script there,
		// so what follows the fi runs only where the condition does not hold
		{name: "a decided if's else that exits, under a run-time condition", script: "set -e\nRG=myrg\ncleanup() { helm uninstall web -n web; exit 0; }\nif [ -n \"$CLEANUP\" ]; then\n  if [ -z \"$RG\" ]; then exit 1; else cleanup; fi\nfi\nhelm upgrade --install web oci://registry-1.docker.io/bitnamicharts/nginx --version 18.2.4 -n web --create-namespace\n",
			want: []string{"when: vars.get(\"CLEANUP\", \"\") != \"\"\n", "when: '!(vars.get(\"CLEANUP\", \"\") != \"\")'\n    helm:"}},
		// but a final else decided by a file absent at import stays the run's to pass
		// (regression over 46s67h's setup-aws-credentials.sh: .env.aws, never committed)
		{name: "a decided else on a file the run provides", script: "set -e\nif [ -f ../.env.aws ]; then F=../.env.aws\nelif [ -f .env.aws ]; then F=.env.aws\nelse echo missing; exit 1\nfi\nkubectl create namespace x\n",
			want: []string{"name: namespace-x"}, never: []string{"bash never runs it"}},
		// 46s70v D2, tinder-clone's deploy.sh:29: a precondition on the cluster the script stops on
		{name: "an existence check the script stops on", script: "set -euo pipefail\nif ! kubectl -n demo get secret auth >/dev/null 2>&1; then echo \"create secret auth first\" >&2; exit 65; fi\nkubectl create namespace demo\n",
			want:       []string{"name: namespace-demo"},
			notCarried: []string{"a check the script stops on where it finds nothing, which khook does not run"}},
	})
}

// 46s70w D2 (eoapi-k8s's deployment.sh:271-313): a get in a function only
// a branch the given arguments do not take calls is read-only there too.
func TestTrial46s70wUntakenFunctionGetIsReadOnly(t *testing.T) {
	script := "dbg() { kubectl get pods -n app; }\ncase \"$1\" in\n  run) kubectl create namespace app ;;\n  debug) dbg ;;\nesac\n"
	res := importScript(t, map[string]string{"install.sh": script}, "run")
	if got := fateAt(res.Model, 1); got != string(importer.FateReadOnly) || len(res.Model.NotCarried) != 0 {
		t.Errorf("line 1: %s, not carried %v", got, res.Model.NotCarried)
	}
}
