package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trials 46zw and 46zx (scripts of repositories on this
// machine no script trial had read, run once on 3d9cfa2) showed, cut down.

// 46zw D1, D2: an array made of "$@" is a word per argument, none for
// none: --set pairs passed through a function are values; no arguments
// pass nothing.
func TestArrayOfArgumentsIsTheirWords(t *testing.T) {
	res := importScript(t, map[string]string{"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n", "install.sh": `#!/bin/bash
set -euo pipefail
install_chart() {
  local chart=$1 release=$2
  shift 2
  local extra_args=("$@")
  helm upgrade --install "$release" "./charts/$chart" -n demo "${extra_args[@]}"
}
install_chart app app --set existingSecret=app-credentials --set replicas=2
install_chart app bare
`})
	spec := string(res.Spec)
	if !strings.Contains(spec, "existingSecret: app-credentials") || !strings.Contains(spec, "release: bare") || len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, spec)
	}
}

// 46zw D3: a loop over $(find DIR -name '*.yaml' | grep -v X | sort)
// applies the files find lists at import.
func TestLoopOverFindApplies(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
	res := importScript(t, map[string]string{"k8s/resources/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n",
		"k8s/resources/a.yaml": strings.Replace(cm, "%s", "a", 1), "k8s/resources/b.yaml": strings.Replace(cm, "%s", "b", 1), "scripts/x.txt": "",
		"install.sh": "#!/bin/bash\nset -e\nD=k8s/resources\nNSF=namespace.yaml\nkubectl apply -f \"$D/namespace.yaml\"\nfor r in $(find \"$D\" -name \"*.yaml\" -o -name \"*.yml\" | grep -v \"$NSF\" | sort); do\n  kubectl apply -n app -f \"$r\"\ndone\n"})
	if n := len(res.Model.Steps); n != 3 || len(res.Model.NotCarried) != 0 {
		t.Errorf("%d steps, not carried %v\n%s", n, res.Model.NotCarried, res.Spec)
	}
}

// 46zx D1 and the find -exec left since 46zj: find … -exec kubectl apply
// -f {} \; is an apply per file find lists at import; under a cd the run
// makes it cannot list, named not carried, and a [ -d … ] there is not
// decided at import.
func TestFindExecKubectl(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
	res := importScript(t, map[string]string{"crds/a.yaml": strings.Replace(cm, "%s", "a", 1), "crds/b.yaml": strings.Replace(cm, "%s", "b", 1),
		"install.sh": "#!/bin/bash\nset -e\nfind crds -name \"*.yaml\" -exec kubectl apply -n x -f {} \\;\nTEMP_DIR=$(mktemp -d)\ngit clone https://example.invalid/ext.git \"$TEMP_DIR\"\ncd \"$TEMP_DIR\"\nif [ -d config/crds ]; then\n  find config/crds -name \"*.yaml\" -exec kubectl apply -f {} \\;\nfi\n"})
	if fateAt(res.Model, 3) != "step,step" || fateAt(res.Model, 8) != "not carried" {
		t.Errorf("fates %q %q\n%v", fateAt(res.Model, 3), fateAt(res.Model, 8), res.Model.NotCarried)
	}
}

// 46zx D7: a ConfigMap from a file that holds a credential (a Keycloak
// realm's clientSecret) is not copied into the spec.
func TestConfigMapFromAFileWithCredentials(t *testing.T) {
	res := importScript(t, map[string]string{"realm.json": "{\"clients\": [{\"clientId\": \"web\", \"clientSecret\": \"Sup3rS3cretClient\"}]}\n",
		"install.sh": "#!/bin/bash\nset -e\nkubectl create namespace kc\nkubectl create configmap realm -n kc --from-file=realm.json=./realm.json\n"})
	if strings.Contains(string(res.Spec), "Sup3rS3cretClient") || fateAt(res.Model, 4) != "not carried" {
		t.Errorf("line 4 %q\n%s", fateAt(res.Model, 4), res.Spec)
	}
}

// 46zx D5: if kubectl rollout status …; then …; else kubectl get events;
// fi is the wait, not a probe (its else only reads).
func TestRolloutStatusWithReadOnlyElse(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nif kubectl rollout status deployment/web -n web --timeout=180s; then\n  echo ok\nelse\n  kubectl -n web get events | tail -n 30 || true\nfi\n"})
	if !strings.Contains(string(res.Spec), "status: deployment/web") {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// 46zx D2: helm template … --output-dir DIR, then kubectl apply -R -f DIR,
// is the chart's helm step; without -R kubectl reads only DIR's own files
// (helm writes DIR/<chart>/templates), so the script's apply finds none.
func TestTemplateOutputDirApply(t *testing.T) {
	files := map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n", "chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo}\n"}
	files["install.sh"] = "#!/bin/bash\nset -e\nhelm template demo ./chart -n demo --output-dir /tmp/demo-out\nkubectl apply -R -f /tmp/demo-out -n demo\n"
	res := importScript(t, files)
	if fateAt(res.Model, 4) != "folded" || len(res.Model.Steps) != 1 || res.Model.Steps[0].Out.Helm == nil {
		t.Errorf("-R: line 4 %q, steps %d\n%s", fateAt(res.Model, 4), len(res.Model.Steps), res.Spec)
	}
	files["install.sh"] = "#!/bin/bash\nset -e\nkubectl create namespace demo\nhelm template demo ./chart -n demo --output-dir /tmp/demo-out\nkubectl apply -f /tmp/demo-out -n demo\n"
	res = importScript(t, files)
	if nc := res.Model.NotCarried; len(nc) != 1 || !strings.Contains(nc[0].Why, "without -R reads only the directory's own files") {
		t.Errorf("no -R: not carried %v", nc)
	}
}

// 46zx D2: a file or directory the script writes on every path it takes
// is there when a later test looks: [[ -d DIR ]] after helm template
// --output-dir DIR holds, and the || fallback's file is not asked for.
func TestTestOfAPathTheScriptWrote(t *testing.T) {
	res := importScript(t, map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n", "install.sh": `#!/bin/bash
set -euo pipefail
helm template demo ./chart -n demo --output-dir /tmp/demo-out 2>/dev/null || helm template demo ./chart -n demo > /tmp/demo-out.yaml
if [[ -d /tmp/demo-out ]]; then
  kubectl apply -R -f /tmp/demo-out -n demo
elif [[ -f /tmp/demo-out.yaml ]]; then
  kubectl apply -f /tmp/demo-out.yaml -n demo
fi
`})
	if len(res.Model.Steps) != 1 || res.Model.Steps[0].Out.Helm == nil || res.Model.Steps[0].Out.When != "" || len(res.Model.Vars) != 0 || len(res.Model.NotCarried) != 0 {
		t.Errorf("vars %v, not carried %v\n%s", res.Model.Vars, res.Model.NotCarried, res.Spec)
	}
}

// 46zx D4: a ConfigMap --from-file of a folder takes the files the script
// copied or edited there before (sed -i, then cp f -p dir/), as bash's
// kubectl finds them.
func TestConfigMapFromAFolderTheScriptFilled(t *testing.T) {
	res := importScript(t, map[string]string{"config/router/router.yaml": "image: router:latest\n", "config/manifests/svc.yaml": "port: 80\n", "install.sh": `#!/bin/bash
set -e
sed -i "s|:latest|:v2|g" config/router/router.yaml
cp config/router/router.yaml -p config/manifests/
kubectl create configmap bundle -n demo --from-file config/manifests
`})
	spec := string(res.Spec)
	if !strings.Contains(spec, "router.yaml: |") || !strings.Contains(spec, "image: router:v2") || !strings.Contains(spec, "port: 80") || len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, spec)
	}
}

// 46zx D3: a here-document whose line is a variable the script computes
// (yq's YAML) is an object only the run knows: named so, not "fix the
// manifest".
func TestHeredocWithComputedYAMLBlock(t *testing.T) {
	res := importScript(t, map[string]string{"realm.json": "{\"realm\": \"demo\"}\n", "install.sh": "#!/bin/bash\nset -e\nYAML_DATA=$(yq -P '.' realm.json | sed 's/^/    /')\ncat <<EOF | kubectl apply -f -\napiVersion: k8s.keycloak.org/v2alpha1\nkind: KeycloakRealmImport\nmetadata: {name: demo, namespace: kc}\nspec:\n  realm:\n$YAML_DATA\nEOF\n"})
	if nc := res.Model.NotCarried; len(nc) != 1 || !strings.Contains(nc[0].Why, "holds $YAML_DATA on a line of its own") {
		t.Errorf("not carried %v", nc)
	}
}

// 46zw N2: helm -f <(sops -d secrets.yaml) reads the sops file itself,
// which khook decrypts where the step reads it.
func TestSopsProcessSubstitution(t *testing.T) {
	res := importScript(t, map[string]string{"secrets.yaml": "a: ENC[AES256_GCM,data:x]\nsops: {version: 3.9.0}\n", "install.sh": "#!/bin/bash\nset -e\nhelm upgrade --install app app --repo https://charts.example.com -n app -f <(sops --decrypt secrets.yaml)\n"})
	if spec := string(res.Spec); !strings.Contains(spec, "- file: ./secrets.yaml") || fateAt(res.Model, 3) != "step" {
		t.Errorf("line 3 %q\n%s", fateAt(res.Model, 3), spec)
	}
}

// 46zw N3: helm repo update where no step installs from a repository is
// read-only, not folded into nothing.
func TestRepoUpdateWithNoRepositoryStep(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nhelm repo add x https://charts.example.com\nhelm repo update\nhelm install a x/app --set \"k=$(date)-$(hostname)\"\nkubectl create namespace y\n"})
	if fateAt(res.Model, 3) != "read-only" {
		t.Errorf("line 3 %q", fateAt(res.Model, 3))
	}
}

// 46zy D1, D3, D4: kubectl patch --subresource=status is not carried (a
// patch of the object would change nothing); ${A[1]} and ${#A[@]} of an
// array the script builds from its arguments; a plain literal after a
// command that read a file is no secret.
func TestTrial46zy(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl patch node n1 --subresource status --type=json -p='[{\"op\":\"add\",\"path\":\"/status/capacity/x\",\"value\":\"1\"}]'\n"})
	if fateAt(res.Model, 2) != "not carried" {
		t.Errorf("subresource: %q", fateAt(res.Model, 2))
	}
	res = importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nP=()\nfor a in \"$@\"; do P+=(\"$a\"); done\nif [[ ${#P[@]} -ge 2 ]]; then NS=\"${P[1]}\"; fi\nif [[ -z \"$NS\" ]]; then exit 1; fi\nkubectl create namespace \"$NS\"\n"}, "alice", "dev")
	if !strings.Contains(string(res.Spec), "name: dev\n") {
		t.Errorf("array index:\n%s", res.Spec)
	}
	res = importScript(t, map[string]string{"install.sh": "#!/bin/bash\nK=token\nkubectl -n cm create secret generic cf --from-literal=$K=$(cat \"$HOME/.cf\")\nNS=gateway\nkubectl create namespace \"$NS\"\n"})
	if !strings.Contains(string(res.Spec), "name: gateway\n") {
		t.Errorf("literal after a file read:\n%s", res.Spec)
	}
}

// 46zz D1: a committed file a command khook does not run writes over
// (docker run … > secret.json) is not what the apply after it reads; a
// committed empty file holds no object kubectl could apply.
func TestOverwrittenAndEmptyFiles(t *testing.T) {
	res := importScript(t, map[string]string{"secret.json": "", "install.sh": "#!/bin/bash\nset -e\ndocker run --rm example/gen -o json > secret.json\nkubectl create -f secret.json -n demo\n"})
	if nc := fmt.Sprint(res.Model.NotCarried); fateAt(res.Model, 4) != "not carried" || !strings.Contains(nc, "written by the script at install.sh:3") {
		t.Errorf("overwritten: %s", nc)
	}
	res = importScript(t, map[string]string{"secret.json": "\n", "install.sh": "#!/bin/bash\nkubectl create namespace demo\nkubectl create -f secret.json -n demo\n"})
	if nc := fmt.Sprint(res.Model.NotCarried); !strings.Contains(nc, "secret.json is empty at import") {
		t.Errorf("empty: %s", nc)
	}
}

// 46zy D2: for nad in ${NADS//,/ } over NADS="${NADS:-a,b}" runs the
// default's items, each under when: NADS is its default, said.
func TestLoopOverAVariablesDefault(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nNADS=\"${NADS:-a,b}\"\nfor nad in ${NADS//,/ }; do\n  kubectl create namespace \"$nad\"\ndone\n"})
	spec := string(res.Spec)
	if len(res.Model.Steps) != 2 || strings.Count(spec, "when: vars.get(\"NADS\", \"a,b\") == \"a,b\"") != 2 || !strings.Contains(spec, "name: namespace-b") {
		t.Errorf("spec:\n%s", spec)
	}
}

// Re-reading the change: a download URL with credentials never becomes
// the spec's url:, and a value merely starting "your-" is no placeholder.
func TestDownloadWithCredentialsAndPlaceholders(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nwget https://bob:S3cretPw9@example.com/x.yaml\nkubectl apply -n a -f x.yaml\n"})
	if strings.Contains(string(res.Spec), "S3cretPw9") || strings.Contains(fmt.Sprint(res.Model.NotCarried, res.Model.Info), "S3cretPw9") {
		t.Errorf("credentials written:\n%s", res.Spec)
	}
	res = importScript(t, map[string]string{"cfg.yaml": "password: your_real_pw_123\n", "install.sh": "#!/bin/bash\nset -e\nkubectl create namespace a\nkubectl create configmap c -n a --from-file=cfg.yaml\n"})
	if strings.Contains(string(res.Spec), "your_real_pw_123") {
		t.Errorf("a credential taken for a placeholder:\n%s", res.Spec)
	}
}

// 46zz N1: under set -e an apply the API refuses ends bash's run there;
// the steps after it that the spec carries are said to be ones bash never
// gets to on such a cluster.
func TestRemovedAPIUnderSetE(t *testing.T) {
	res := importRemoved(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl apply -f dep.yaml\nkubectl apply -f svc.yaml\n",
		"dep.yaml": "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\n",
		"svc.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: svc}\n"}, "dep.yaml", "deployment.extensions/web: extensions/v1beta1 Deployment was removed in v1.16")
	if nc := res.Model.NotCarried; len(nc) != 1 || !strings.Contains(nc[0].Why, "never runs the 1 helm/kubectl command after it, a step this spec carries") {
		t.Errorf("not carried %v", nc)
	}
}

// 46zk D5: helm --skip-schema-validation (a chart whose schema refers to
// a dead URL) is the step's skipSchemaValidation.
func TestSkipSchemaValidationFlag(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nhelm upgrade --install dagster dagster --repo https://dagster-io.github.io/helm -n dagster --skip-schema-validation --wait\n"})
	if spec := string(res.Spec); !strings.Contains(spec, "skipSchemaValidation: true") || len(res.Model.Info) != 0 && strings.Contains(fmt.Sprint(res.Model.Info), "skip-schema") {
		t.Errorf("%v\n%s", res.Model.Info, spec)
	}
}
