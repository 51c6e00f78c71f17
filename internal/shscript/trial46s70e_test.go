package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trials 46s70f–h showed, each cut down.
func TestTrial46s70eIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// healenium's startup/init.sh (trial 46s70g's D2): sudo -u USER helm …
		// is helm, read through sudo's options
		{name: "sudo -u USER helm and kubectl", script: "U=$(whoami)\nsudo -u \"$U\" helm repo add bitnami https://charts.bitnami.com/bitnami\nsudo -u \"$U\" helm install db bitnami/postgresql\nsudo -E -H --preserve-env=PATH -- kubectl create namespace demo\nsudo --user=$U KUBECONFIG=/etc/k.yaml kubectl create namespace demo2\n",
			want: []string{"release: db", "repo: https://charts.bitnami.com/bitnami", "name: demo\n", "name: demo2\n"}},
		// the same script: sudo -u USER bash <<EOF runs the here-document's lines
		{name: "sudo -u USER bash <<EOF", script: "P=$(openssl rand -hex 8)\nsudo -u \"$USER\" bash <<EOF\nT=\\$(date)\nkubectl create secret generic hlm --from-literal=adminPassword=$P --dry-run=client -o yaml | kubectl apply -f -\nEOF\n",
			want: []string{"name: hlm", "adminPassword: ${P | toJson}"}},
		// the same script: the user's values under an if make no steps of their own
		{name: "sudo -u with a user set per branch", script: "if [ -n \"$SUDO_USER\" ]; then\n  U=\"$SUDO_USER\"\nelse\n  U=$(whoami)\nfi\nsudo -u \"$U\" helm install db oci://e.com/postgresql\n",
			want: []string{"release: db"}, never: []string{"db-2"}},
		// the same script (trial 46s70g's D3): sudo VAR=value cmd names cmd
		{name: "sudo VAR=value apt-get", script: "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y jq\nkubectl create namespace demo\n",
			want: []string{"name: demo\n"}, notCarried: []string{"(a container image that has apt-get)"}},
	})
}

// trial 46s70f's D5 (dokuwiki's test.sh): helm reset is Helm 2's, as helm init is
func TestTrial46s70fHelmReset(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "helm reset", script: "helm reset --force\nhelm init\nkubectl create namespace wiki\n",
			want: []string{"name: wiki\n"}, notCarried: []string{"Helm 2's helm reset, which removes its tiller", "Helm 2's tiller"}, never: []string{"plugin"}},
	})
}

// trial 46s70f's D6 (dokuwiki's test.sh): kubectl run --generator=…, a flag
// current kubectl refuses, is named at its line
func TestTrial46s70fRunGenerator(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "kubectl run --generator=run-pod/v1", script: "kubectl run wiki --generator=run-pod/v1 --image=bitnami/dokuwiki -n w\n",
			want: []string{"kind: Pod", "image: bitnami/dokuwiki"}, notCarried: []string{"kubectl 1.21 and later refuse it (unknown flag: --generator)"}},
		{name: "kubectl run --generator deployment/apps.v1", script: "kubectl run wiki --generator deployment/apps.v1 --image=bitnami/dokuwiki -n w\nkubectl create namespace w2\n",
			want: []string{"name: w2\n"}, notCarried: []string{"--generator=deployment/apps.v1 made another object than a Pod"}},
	})
}

// trial 46s70h's D2: kubectl cp of a pod named by a command substitution
// is named for khook having no step for cp
func TestTrial46s70hCpOfComputedPod(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "kubectl cp ns/`…`:/path", script: "kubectl create namespace t\nkubectl cp t/`kubectl get pods -n t | grep tester | cut -d \" \" -f1`:/build ./report\n",
			want: []string{"name: t\n"}, notCarried: []string{"khook has no step for kubectl cp"}},
		{name: "kubectl expose of a computed name is not said to have no step", script: "kubectl expose deployment \"$(kubectl get deploy -o name | head -1)\" --port 80\n",
			notCarried: []string{"an argument is only known when the script runs"}},
	})
}

// trial 46s70h's D3: kubectl logs -f returns when the container exits, so
// it is said to hold the script only for a workload kept running
func TestTrial46s70hLogsFollow(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "kubectl logs -f of a kubectl run job", script: "kubectl run tester -n default --image=busybox:1.36 --restart=Never -- echo done\nkubectl logs -f tester -n default\nkubectl delete pod tester -n default\n",
			want: []string{"name: run-tester"}, never: []string{"Ctrl-C", "never runs"}},
		{name: "kubectl logs -f job/x", script: "kubectl logs -f job/migrate -n a\nkubectl create namespace b\n",
			want: []string{"name: b\n"}, never: []string{"Ctrl-C"}},
	})
	// of another pod: what holds if its container keeps running
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl logs -f web-0 -n a\nkubectl create namespace b\n"})
	if said := fmt.Sprint(res.Model.Info); !strings.Contains(said, "where the container keeps running (a server), it runs until it is stopped") || strings.Contains(said, "so bash never runs") {
		t.Errorf("logs -f of a pod: %s", said)
	}
}
