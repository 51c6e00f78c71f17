package shscript

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// What held-out trial 46s69s showed, each cut down.
func TestTrial46s70aIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// EricNovales/listmonk-gitops's k3s_infra_deploy.sh: wait_rollout_ready
		// returns 0 where the rollout is ready, and only otherwise calls
		// log_err, which exits: the commands after its call run (D1)
		{name: "return 0 on a test khook cannot decide, then a function that exits", script: "log_err() { echo \"$*\"; exit 1; }\nwait_ready() {\n  available=\"$(kubectl -n app get deploy web -o jsonpath='{.status.availableReplicas}' || echo 0)\"\n  if [[ \"$available\" -ge 1 ]]; then return 0; fi\n  log_err \"not ready\"\n}\nwait_ready\nkubectl create namespace after\n",
			want: []string{"name: namespace-after", "the script stops here only where the function did not return first (at install.sh:6"}},
		// the same script: install_ingress_nginx_if_missing returns where
		// ingress_nginx_present, a function of kubectl gets, finds it (D4)
		{name: "if a function of checks; then return 0; fi before a helm install", script: "present() {\n  kubectl get ns ingress-nginx >/dev/null 2>&1 || return 1\n  kubectl -n ingress-nginx get deploy/ingress-nginx-controller >/dev/null 2>&1 || return 1\n  return 0\n}\ninstall_if_missing() {\n  if present; then echo skip; return 0; fi\n  helm upgrade --install ingress-nginx ingress-nginx --repo https://kubernetes.github.io/ingress-nginx -n ingress-nginx --create-namespace\n}\ninstall_if_missing\n",
			want: []string{"release: ingress-nginx", "install.sh:9: present: where this finds something the script returns, and step ingress-nginx after it does not run"}},
		// its repro: the same check ending the script with exit 0 (D4)
		{name: "if a function of checks; then exit 0; fi before a helm install", script: "present() { kubectl -n ingress-nginx get deploy/ingress-nginx-controller >/dev/null 2>&1; }\nif present; then echo skip; exit 0; fi\nhelm upgrade --install ingress-nginx ingress-nginx --repo https://kubernetes.github.io/ingress-nginx -n ingress-nginx --create-namespace\n",
			want: []string{"release: ingress-nginx", "install.sh:4: present: where this finds something the script stops (exit), and step ingress-nginx after it does not run"}},
		// helm_install_and_check's helm_release_exists: helm's flags before its verb (D4)
		{name: "if a function of helm -n NS status; then return 0; fi", script: "exists() {\n  local ns=\"$1\" rel=\"$2\"\n  helm -n \"$ns\" status \"$rel\" >/dev/null 2>&1\n}\ninst() {\n  if exists \"$1\" \"$2\"; then echo skip; return 0; fi\n  helm upgrade --install \"$2\" oci://e.com/web -n \"$1\"\n}\ninst web web\n",
			want: []string{"install.sh:8: exists \"$1\" \"$2\": where this finds something the script returns, and step web after it does not run"}},
	})
}

// D4's exit guard: in a function, it skips what follows the call too; in a
// script run with bash, only that script's steps, not its caller's; an
// exit 1 (a cluster the script refuses) is no skip.
func TestTrial46s70aExitGuards(t *testing.T) {
	cm := func(name string) string { return "kubectl create configmap " + name + " -n x --from-literal=k=v\n" }
	res := importScript(t, map[string]string{
		"install.sh": "#!/bin/bash\nset -e\nbash sub.sh\n" + cm("b") + "skip() {\n  if kubectl get configmap c -n x; then exit 0; fi\n}\nskip\n" + cm("c"),
		"sub.sh":     "if kubectl get configmap a -n x; then exit 0; fi\n" + cm("a") + "if kubectl get ns traefik; then exit 1; fi\n" + cm("a2"),
	})
	var said []string
	for _, n := range res.Model.Info {
		if strings.Contains(n.Why, "where this finds something the script stops") {
			said = append(said, fmt.Sprintf("%s %s", n.Loc, n.Why[strings.Index(n.Why, ", and ")+6:strings.Index(n.Why, " after it")]))
		}
	}
	slices.Sort(said)
	if got := strings.Join(said, "; "); got != "install.sh:6 step configmap-c; sub.sh:1 steps configmap-a and configmap-a2" {
		t.Errorf("said %q", got)
	}
}
