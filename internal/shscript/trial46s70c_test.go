package shscript

import (
	"testing"

	"github.com/khook/khook/internal/importer"
)

// What held-out trials 46s69q, 46s69r and 46s69t showed, each cut down.
func TestTrial46s70cIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// kobbikobb/guessthename's k8s/deploy.sh: two seds chained after cat (trial 46s69r's D1)
		{name: "cat FILE | sed … | sed … | kubectl apply -f-", script: "TAG=v1\nREG=example.io\ncat app.yaml | sed \"s/{{TAG}}/$TAG/g\" | sed \"s/{{REG}}/$REG/g\" | kubectl apply -n x -f-\nsed s/{{TAG}}/v2/ app.yaml | sed -E 's/(\\{\\{)REG}}/r2/' | kubectl apply -n y -f -\n",
			files: map[string]string{"app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  tag: \"{{TAG}}\"\n  reg: \"{{REG}}\"\n"},
			want:  []string{"tag: \"v1\"\n", "reg: \"example.io\"\n", "tag: \"v2\"\n", "reg: \"r2\"\n"}, never: []string{"{{"}},
		// jungle-ams' argo/events/install.sh: the context's namespace is no -n (trial 46s69q's D1)
		{name: "set-context --namespace, then apply of an object naming another", script: "kubectl config set-context --current --namespace=argo\nkubectl apply -f svc.yaml\n",
			files: map[string]string{"svc.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: other\n"},
			want:  []string{"- file: ./svc.yaml\n      namespace: argo\n"}},
		// poundcake's bin/install-stackstorm.sh: a helm command grown under two tests (trial 46s69q's D2)
		{name: "eval $CMD grown under two undecided tests", script: "HELM_CMD=\"helm upgrade --install st2 stackstorm/stackstorm-ha --namespace=st2\"\nif [ -f \"/etc/a.yaml\" ]; then HELM_CMD=\"$HELM_CMD -f /etc/a.yaml\"; fi\nif [ -f \"/etc/b.yaml\" ]; then HELM_CMD=\"$HELM_CMD -f /etc/b.yaml\"; fi\nkubectl create namespace x\neval $HELM_CMD\n",
			want: []string{"name: namespace-x"}, notCarried: []string{"a helm command the script builds in $HELM_CMD (it starts with helm)"}},
		// LoveSkylark/LibreNMS-Installer's start-server.sh: a chart folder under a variable (trial 46s69t's D2)
		{name: "helm install of a local chart under $VAR, trailing slash", script: "kubectl create namespace x\nhelm install librenms \"$LNMS_DIR/chart/LibreNMS-Helm/\" -f \"$LNMS_DIR/lnms-config.yaml\"\n",
			want: []string{"name: namespace-x"}, notCarried: []string{"is a local chart folder under ${LNMS_DIR}, which only the run knows, and a step's chart: cannot be a variable"}},
	})
}

// TR0N-ZEN/kubernetes' mongodb/run.sh: the gets of a string watch runs
// are read-only, as they are bare (trial 46s69r's D3)
func TestWatchStringReadOnly(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl create namespace x\nwatch --color -d 'kubectl get pods; kubectl get services;'\n"})
	if len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried: %v", res.Model.NotCarried)
	}
	ro := 0
	for _, c := range res.Model.Commands {
		if c.Fate == importer.FateReadOnly {
			ro++
		}
	}
	if ro != 2 || len(res.Model.Commands) != 3 {
		t.Errorf("commands %v, want 2 read-only of 3", res.Model.Commands)
	}
}
