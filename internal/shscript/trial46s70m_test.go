package shscript

import "testing"

// What held-out trial 46s70m (on 559b738) showed, cut down.
func TestTrial46s70mIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// D1, EiffelCOSYSERENA/green-xg's deploy-monitoring-with-network.sh:75-85: a helm install
		// guarded by a check of another object than its release or namespace is said at the check
		{name: "a helm install guarded by a check of another object", script: "set -e\nif ! kubectl get ingressclass nginx &> /dev/null; then\n  helm upgrade --install ingress-nginx ingress-nginx --repo https://kubernetes.github.io/ingress-nginx --version 4.11.3 -n ingress-nginx --create-namespace\nfi\n",
			want: []string{"release: ingress-nginx", "kubectl get ingressclass nginx: the script installs step ingress-nginx only where this finds no nginx"}},
		// the namespace the release makes is its twin: nothing to say
		{name: "a helm install guarded by a check of its own namespace", script: "set -e\nif ! kubectl get namespace cert-manager &> /dev/null; then\n  helm upgrade --install cert-manager cert-manager --repo https://charts.jetstack.io --version v1.16.1 -n cert-manager --create-namespace\nfi\n",
			want: []string{"release: cert-manager"}, never: []string{"only where this finds no"}},
	})
}
