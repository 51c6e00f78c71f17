package shscript

import (
	"fmt"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// What trial 46g's scripts (flagger, volcano, korifi, edb, pravega,
// boettiger, appmesh, cloud-sql-proxy-operator, sourcegraph) showed,
// each cut down to its lines.
func TestTrial46gIdioms(t *testing.T) {
	chart := "apiVersion: v2\nname: chart\nversion: 0.1.0\n"
	checkIdioms(t, []idiom{
		{name: "basename with a suffix", script: "VALUES_FILE=values/local/gw.yaml\nhelm uninstall -n examples $(basename \"${VALUES_FILE}\" .yaml)\n",
			want: []string{"release: gw\n"}},
		{name: "a commit hash is not the checkout", script: "TAG=${TAG:-`git rev-parse --verify HEAD`}\nhelm upgrade --install x ./chart -n x --set image.tag=${TAG}\n",
			files: map[string]string{"chart/Chart.yaml": chart}, want: []string{"TAG: {type: string, required: true", "tag: ${TAG}"}},
		{name: "cd || exit; pwd", script: "DIR=$(cd \"$(dirname \"$0\")\" || exit 1; pwd)\nsource \"$DIR/lib/k8s.sh\"\nroll cert-manager\n",
			files: map[string]string{"lib/k8s.sh": "roll() { kubectl rollout status deployment/$1 -n $1 --timeout=2m; }\n"}, want: []string{"status: deployment/cert-manager"}},
		{name: "values piped to helm -f -", script: "cat <<EOT | helm upgrade -i traefik ./chart --namespace traefik -f -\nservice:\n  type: NodePort\nEOT\n",
			files: map[string]string{"chart/Chart.yaml": chart}, want: []string{"service:\n          type: NodePort"}},
		{name: "a URL in a variable's default", script: "URL=\"${URL:-https://example.com/x/v1.4.2/op.yaml}\"\nkubectl apply -f \"$URL\"\n",
			want: []string{"- url: ${URL}"}},
		{name: "arithmetic in a here-document", script: "days=5\ncat <<EOF | kubectl apply -f -\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: x\ndata:\n  seconds: \"$((days * 24 * 60 * 60))\"\nEOF\n",
			want: []string{`seconds: "432000"`}},
		{name: "a command's output in a here-document", script: "cat <<EOF | kubectl apply -f -\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: x\ndata:\n  host: \"$(hostname)\"\nEOF\n",
			notCarried: []string{"only known when the script runs (the output of $(hostname))"}},
		{name: "a kustomization the script fills", script: "cp vendor/components.yaml deps/ms/components.yaml\nkubectl apply -k deps/ms\n",
			files:      map[string]string{"vendor/components.yaml": configMap, "deps/ms/kustomization.yaml": "resources:\n- components.yaml\n"},
			notCarried: []string{"khook runs no shell commands", "is not in the kustomization at import: the script makes it earlier (install.sh:3 cp)"}},
		{name: "a branch that exits", script: "echo $* | grep -q -- --quit\nif [[ $? -eq 0 ]]; then\n  kubectl delete -f ./gone.yaml\n  exit 0\nfi\nkubectl create namespace x\n",
			want: []string{"name: namespace-x\n    apply"}, notCarried: []string{"after which the script exits: the spec follows the path where it does not hold"}},
		{name: "a file test on a variable empty by default", script: "KEY_PATH=${KEY_PATH:=\"\"}\nif [[ -f \"$KEY_PATH\" ]]; then\n  kubectl apply -n x -f ./key.yaml\nelse\n  kubectl apply -n x -f ./fake.yaml\nfi\n",
			files: map[string]string{"key.yaml": configMap, "fake.yaml": configMap},
			want:  []string{`KEY_PATH: {type: string, default: ""}`, `when: vars.get("KEY_PATH", "") != ""`, `when: '!(vars.get("KEY_PATH", "") != "")'`}},
		{name: "envsubst with its own environment", script: "PGPASS=$(openssl rand -base64 24)\nAPP_PASSWORD=\"$PGPASS\" envsubst < cm.yaml | kubectl apply -f -\n",
			files: map[string]string{"cm.yaml": strings.Replace(configMap, "data:\n", "data:\n  pw: ${APP_PASSWORD}\n", 1)},
			want:  []string{"pw: ${PGPASS}", "PGPASS: {type: string, secret: true, required: true, description: \"a secret the script generates"}},
		{name: "envsubst into a file", script: "export NS=apps\nenvsubst < tmpl.yaml > out.yaml\nkubectl apply -f out.yaml\n",
			files: map[string]string{"tmpl.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ${NS}\n"}, want: []string{"namespace: apps"}},
		{name: "helm template into a file", script: "helm template rel ./chart --namespace x > ./rendered.yaml\nkubectl apply --server-side -f ./rendered.yaml --namespace x\n",
			files: map[string]string{"chart/Chart.yaml": chart}, want: []string{"release: rel\n"}},
		{name: "set image", script: "kubectl set image deployment/web web=nginx:1.27 -n apps\n",
			want: []string{"target: deployment/web", "- image: nginx:1.27\n                  name: web"}},
		{name: "a loop over values, not carried each turn", script: "TMP=$(mktemp -d)\nfor c in one two; do\n  kubectl apply -f \"${TMP}/${c}.yaml\"\ndone\n",
			notCarried: []string{"${TMP}/one.yaml is under $TMP", "${TMP}/two.yaml is under $TMP"}},
		{name: "$# of a script run with the script's arguments, none given", script: "./hack/inner.sh apply \"$@\"\n",
			files: map[string]string{"hack/inner.sh": "#!/bin/bash\nset -e\nC=\"a b\"\nif [ $# -gt 1 ]; then\n  C=\"$2\"\nfi\nfor i in $C; do kubectl apply -f deploy/$i.yaml; done\n", "deploy/a.yaml": configMap, "deploy/b.yaml": configMap},
			want:  []string{"file: ./deploy/a.yaml", "file: ./deploy/b.yaml", "$#: counted as 1"}},
		{name: "a usage check on $# is not taken", script: "if [ $# -lt 1 ]; then\n  echo usage\n  exit 1\nfi\nkubectl apply -f m.yaml\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"file: ./m.yaml"}},
		{name: "a default made of another variable", script: "V=\"${V:-v1.4.2}\"\nURL=\"${URL:-https://example.com/x/$V/op.yaml}\"\nkubectl apply -f \"$URL\"\n",
			want: []string{"- url: https://example.com/x/${V}/op.yaml", "$URL: its default refers to another variable"}},
		{name: "a check whose branch exits", script: "if kubectl get ingress web -n x >/dev/null 2>&1; then\n  helm upgrade --install web ./chart -n x\n  exit 0\nfi\nhelm upgrade --install web ./chart -n x --set ingress.enabled=false\n",
			files: map[string]string{"chart/Chart.yaml": chart}, want: []string{"enabled: false"}, notCarried: []string{"what the script does when kubectl get ingress web"}},
		{name: "the name of a Secret is no secret", script: "APP=app\nREPORTING_SECRET=\"${APP}-reportingsecret\"\nPASSWORD=\"${APP}-secret\"\nkubectl create secret generic \"$REPORTING_SECRET\" -n x --from-literal=p=\"$PASSWORD\"\n",
			want: []string{"name: app-reportingsecret", "p: ${APP_REPORTINGSECRET_P | toJson}"}},
		{name: "a retry's last try after the loop", script: "retry() {\n  for i in {1..10}; do\n    kubectl \"$@\" && return 0\n    sleep 1\n  done\n  kubectl \"$@\"\n}\nretry wait --for=condition=Ready --timeout=30s pods -l app=etcd -n k\nretry wait --for=condition=Ready --timeout=30s pods -l app=api -n k\n",
			want: []string{"name: wait-pods\n    timeout: 5m30s", "name: wait-pods-2\n    needs:\n      - wait-pods\n    timeout: 5m30s"}},
		{name: "a CRD listed in a retry", script: "retry() {\n  for i in {1..60}; do\n    if eval \"$1\"; then return 0; fi\n    sleep 3\n  done\n  return 1\n}\nretry \"kubectl get crd | grep --quiet 'widgets.example.com'\"\nkubectl apply -f m.yaml -n x\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"for: condition=Established\n      \"on\": crd/widgets.example.com", "- wait-crd-widgets-example-com"}},
		{name: "a loop over values, not carried for one reason", script: "gen() {\n  cp s.yaml \"${TMP}/$1.yaml\"\n  sed -i \"s/NAME/$1/\" \"${TMP}/$1.yaml\"\n  kubectl apply -f \"${TMP}/$1.yaml\"\n}\nTMP=$(mktemp -d)\nfor c in one two; do\n  gen ${c}\ndone\n",
			files:      map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: NAME\nstringData:\n  k: v\n"},
			notCarried: []string{"a Secret from a file", "a Secret from a file"}},
		{name: "a copy changed after it", script: "cp m.yaml out.yaml\necho '  extra: x' >> out.yaml\nkubectl apply -f out.yaml -n x\ncp m.yaml out2.yaml\nif [ -n \"$ALT\" ]; then cp alt.yaml out2.yaml; fi\nkubectl apply -f out2.yaml -n x\nsed -i 's/name: c/name: d/' m.yaml\ncp m.yaml out3.yaml\nkubectl apply -f out3.yaml -n x\n",
			files: map[string]string{"m.yaml": configMap, "alt.yaml": configMap}, want: []string{"name: d"},
			notCarried: []string{"changed at install.sh:4 by echo", "(a condition only the run decides), while this command runs whatever it decides"}},
		{name: "a Secret's name made of a variable", script: "APP=${APP:-web}\nTLS_SECRET=\"${APP}-tls\"\nhelm upgrade --install x ./chart -n x --set tls.secretName=\"$TLS_SECRET\"\n",
			files: map[string]string{"chart/Chart.yaml": chart}, want: []string{"secretName: ${APP}-tls"}},
		{name: "the script's arguments, none given", script: "kubectl apply -f m.yaml \"$@\"\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"file: ./m.yaml", "$@: the script's own arguments: none were given to the import"}},
	})
}

// idiom is a script cut down to the lines of a trial's finding.
type idiom struct {
	name, script string
	files        map[string]string
	want         []string // in the spec written
	notCarried   []string // a not-carried line's why, in order
	never        []string // in nothing the import says or writes (a secret)
}

// checkIdioms imports each (after #!/bin/bash and set -e): the spec has
// what it wants, the not-carried lines are those named, and no command
// is not carried when none is.
func checkIdioms(t *testing.T, cases []idiom) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"install.sh": "#!/bin/bash\nset -e\n" + tc.script}
			for k, v := range tc.files {
				files[k] = v
			}
			res := importScript(t, files)
			for _, w := range tc.want {
				if !strings.Contains(string(res.Spec), w) {
					t.Errorf("want %q in\n%s", w, res.Spec)
				}
			}
			for _, secret := range tc.never {
				said := fmt.Sprint(res.Model.NotCarried, res.Model.Info, res.Model.Commands)
				if strings.Contains(string(res.Spec), secret) || strings.Contains(said, secret) {
					t.Errorf("%q is written or said", secret)
				}
			}
			var got []string
			for _, n := range res.Model.NotCarried {
				got = append(got, n.Why)
			}
			if len(got) != len(tc.notCarried) {
				t.Fatalf("not carried %q, want %q", got, tc.notCarried)
			}
			for i, w := range tc.notCarried {
				if !strings.Contains(got[i], w) {
					t.Errorf("not carried %q, want %q", got[i], w)
				}
			}
			for _, c := range res.Model.Commands {
				if c.Fate == importer.FateNotCarried && len(tc.notCarried) == 0 {
					t.Errorf("command %v not carried", c)
				}
			}
		})
	}
}

// A manifest template the script copies and fills with sed (karmada's
// deploy script) is carried inline with sed's substitutions; a ${…} of the
// file itself stays literal; a Secret edited so is never written, one
// copied unchanged is the repository file; sed FILE | kubectl apply -f -
// is the same text.
func TestCopiedTemplateFilledBySed(t *testing.T) {
	tmpl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v\n  namespace: karmada-system\n  annotations:\n    note: \"keep ${literal}\"\ndata:\n  image: \"k8s/apiserver:{{version}}\"\n  type: '{{type}}'\n"
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
VERSION=${VERSION:-v1.31.3}
TEMP_PATH=$(mktemp -d)
cp artifacts/cm.yaml "${TEMP_PATH}"/cm.yaml
sed -i'' -e "s/{{version}}/${VERSION}/g" "${TEMP_PATH}"/cm.yaml
sed -i 's/{{\(ty\)pe}}/\1pe-\1 \& \/x/' "${TEMP_PATH}"/cm.yaml
kubectl apply -f "${TEMP_PATH}"/cm.yaml
cp artifacts/secret.yaml "${TEMP_PATH}"/s.yaml
sed -i "s/{{name}}/s/" "${TEMP_PATH}"/s.yaml
kubectl apply -f "${TEMP_PATH}"/s.yaml
sed "s/{{version}}/v2/" artifacts/cm.yaml | kubectl apply -f -
cp artifacts/secret.yaml "${TEMP_PATH}"/s2.yaml
kubectl apply -f "${TEMP_PATH}"/s2.yaml
`, "artifacts/cm.yaml": tmpl, "artifacts/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: '{{name}}'\nstringData:\n  k: hunter2xyz\n"})
	st := res.Model.Steps
	if len(st) != 3 || strings.Contains(string(res.Spec), "hunter2xyz") || st[2].Out.Apply.Manifests[0].File != "./artifacts/secret.yaml" {
		t.Fatalf("steps %v\n%s", res.Model.Commands, res.Spec)
	}
	for i, want := range []string{`image: "k8s/apiserver:${VERSION}"`, `image: "k8s/apiserver:v2"`} {
		if in := st[i].Out.Apply.Manifests[0].Inline; !strings.Contains(in, want) || !strings.Contains(in, `note: "keep $${literal}"`) {
			t.Errorf("step %d: %s", i, in)
		}
	}
	if in := st[0].Out.Apply.Manifests[0].Inline; !strings.Contains(in, "type: 'type-ty & /x'") {
		t.Errorf("sed's \\1, \\& and \\/: %s", in)
	}
	if nc := res.Model.NotCarried; len(nc) != 1 || nc[0].Line != 11 || !strings.Contains(nc[0].Why, "a Secret from a file (artifacts/secret.yaml") {
		t.Errorf("not carried %v", nc)
	}
}

// sed's expressions are applied at import only where Go's regular
// expressions mean the same; any other is not applied, so the step is not
// carried rather than carried different from sed.
func TestSedApplyKnowsItsLimits(t *testing.T) {
	for _, tc := range []struct {
		expr, in, want string
		ere, applied   bool
	}{
		{`s/{{\(ty\)pe}}/\1-&/g`, "a {{type}} b {{type}}", "a ty-{{type}} b ty-{{type}}", false, true},
		{`s/\s*image:\s*\(.*\)/image: x/`, "  image: nginx", "image: x", false, true},
		{`s/a\+b/X/`, "aaab", "X", false, true},
		{`s/(a+)b/\1/`, "aab", "aa", true, true},
		{`s/x/\t/`, "x", "\t", false, true},
		{`s/\<a\>/b/`, "a", "", false, false},    // GNU word edges: no Go equivalent
		{`s/\(a\)\1/b/`, "aa", "", false, false}, // a back-reference in the pattern
		{`s/a/\U&/`, "a", "", false, false},      // GNU case conversion
		{`1d`, "a", "", false, false},
	} {
		got, why := sedApply(tc.in, []string{tc.expr}, tc.ere)
		if (why == "") != tc.applied || tc.applied && got != tc.want {
			t.Errorf("%s on %q: %q (%s), want %q applied=%v", tc.expr, tc.in, got, why, tc.want, tc.applied)
		}
	}
}
