package shscript

import "testing"

// What held-out trials 46s69c, i, m and n showed and fixer 46s70d fixed,
// each cut down.
func TestTrial46s70dIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// sergiohinojosa/kubernetes-playground's loaddomain.sh (46s69i D3):
		// the fallback set in a function the else calls; the note names the
		// values, not a when: of the spec's
		{name: "sed of a variable set per branch, its fallback in a function", script: "magic() {\n  if [ -n \"${DOMAIN}\" ]; then\n    export DOMAIN\n  else\n    IP=$(dig +short myip.opendns.com)\n    export DOMAIN=\"${IP}.nip.io\"\n  fi\n}\n" +
			"DOMAIN=$(kubectl get configmap domain -n default -o jsonpath={.data.domain})\nif [ -n \"${DOMAIN}\" ]; then\n  export DOMAIN\nelse\n  magic\nfi\nsed 's~domain.placeholder~'\"$DOMAIN\"'~' values.tmpl > gen/values.yaml\nhelm install gitea gitea --repo https://dl.gitea.com/charts/ -n gitea -f gen/values.yaml\n",
			files:      map[string]string{"values.tmpl": "ingress:\n  hosts:\n    - host: git.domain.placeholder\n", "gen/.keep": ""},
			want:       []string{"release: gitea"},
			notCarried: []string{"DOMAIN has a value per branch of the script (${DOMAIN} or ${IP}.nip.io), and the text sed writes here holds only ${IP}.nip.io, whichever path the run takes: edit the step that reads it where the run takes another branch"}},
		// Mahagon/homelab's bootstrap.sh (46s69m D3): values sed makes of a
		// committed file, its quoted \${DOMAIN} the file's own text
		{name: "--values <(echo \"$V\") of V=$(sed \"s|\\${DOMAIN}|${DOMAIN}|g\" f.yaml)", script: "read -rp 'Domain: ' DOMAIN\nV=$(sed \"s|\\${DOMAIN}|${DOMAIN}|g\" values.yaml)\nhelm upgrade --install argocd argo-cd --repo https://argoproj.github.io/argo-helm -n argocd --values <(echo \"$V\") --wait\n",
			files: map[string]string{"values.yaml": "global:\n  domain: argocd.${DOMAIN}\nserver:\n  replicas: 2\n"},
			want:  []string{"domain: argocd.${DOMAIN}\n", "replicas: 2\n"}, never: []string{"$${DOMAIN}"}},
		// futuroptimist/sugarkube's flux-bootstrap.sh (46s69n D3): an elif
		// chain of existence checks patching one object or another: at
		// most one patch, each under its choice, never both always
		{name: "if get A; then patch A; elif get B; then patch B; fi", script: "kubectl create namespace flux-system\n" +
			"if kubectl -n flux-system get kustomization platform >/dev/null 2>&1; then\n  kubectl -n flux-system patch kustomization platform --type=merge -p '{\"spec\":{\"path\":\"./a\"}}'\n" +
			"elif kubectl -n flux-system get kustomization flux-system >/dev/null 2>&1; then\n  kubectl -n flux-system patch kustomization flux-system --type=merge -p '{\"spec\":{\"path\":\"./a\"}}'\nelse\n  echo none\nfi\n",
			want: []string{"when: vars.IF_PLATFORM == \"true\"\n", "when: '!(vars.IF_PLATFORM == \"true\") && vars.IF_FLUX_SYSTEM == \"true\"'", "IF_PLATFORM: {type: string, required: true"}},
	})
}

// sgaluza/supabase-kubernetes' setup.sh (46s69c D1): a values document
// through -f <(cat <<EOF) with ${X:+word} in two keys and a default no
// YAML scalar unquoted: every other value carried, those two named, the
// default quoted.
func TestTrial46s70dValuesWithHoles(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "-f <(cat <<EOF) with ${X:+word}", script: "helm upgrade --install web oci://e.com/nginx -n web -f <(cat <<EOF\nimage:\n  tag: 1.2.3\nauth:\n  google: ${GOOGLE_CLIENT_ID:+true}\n  allow: ${ALLOW:-*}\nprovider: ${GCP:+bigquery}${GCP:-postgres}\nEOF\n)\n",
			want:       []string{"tag: 1.2.3\n", "allow: ${ALLOW | toJson}\n", "the default of ALLOW, *, is no YAML value unquoted"},
			notCarried: []string{"the values auth.google, provider are left out (Helm takes the chart's default there; the document's other values are carried): ${GOOGLE_CLIENT_ID:+…} writes its text only when"}},
		// a hole in a key: which key is not known, the document left out as before
		{name: "cat <<EOF | helm -f - with ${X:+word} as a key", script: "cat <<EOF | helm upgrade --install web oci://e.com/nginx -n web -f -\n${GCP:+bigquery}: 1\nreplicaCount: 2\nEOF\n",
			notCarried: []string{"the values it reads on its standard input are not known at import"}},
	})
}
