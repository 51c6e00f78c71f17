package shscript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/spec"
)

// A file the script writes from a here-document and then applies or
// passes to helm -f is carried inline, as a clean checkout's run finds
// it; one nothing reads is named. Helm's own order of values holds:
// files, then --set, then --set-string, whatever the command line's.
func TestHereDocumentFiles(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
cat <<EOF >>grafana.yaml
persistence:
  enabled: false
url: http://prom
EOF
helm upgrade --install grafana ./chart -n grafana --set persistence.enabled=true --values grafana.yaml --set-string x=1 --set x=2
TMP=$(mktemp -d)
cat > "$TMP/cm.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: apps
EOF
kubectl apply -f "$TMP/cm.yaml"
tee notes.txt <<EOF
hello
EOF
`, "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n"})
	st := res.Model.Steps
	if len(st) != 2 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	want := map[string]any{"persistence": map[string]any{"enabled": true}, "url": "http://prom", "x": "1"}
	if got, _ := json.Marshal(st[0].Out.Helm.Values); string(got) != mustJSON(t, want) || len(st[0].Out.Helm.ValuesFrom) != 0 {
		t.Errorf("values %s, valuesFrom %v", got, st[0].Out.Helm.ValuesFrom)
	}
	if m := st[1].Out.Apply.Manifests; len(m) != 1 || !strings.Contains(m[0].Inline, "name: cm") {
		t.Errorf("manifests %+v", m)
	}
	if nc := res.Model.NotCarried; len(nc) != 1 || nc[0].Line != 18 || !strings.Contains(nc[0].Why, "no step reads the file it writes") {
		t.Errorf("not carried %v", nc)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Whatever a manifest puts in a Secret is a secret variable, whatever its
// name: kuadrant's GOOGLE credentials, read from the environment, were a
// plain variable. $(echo -n "$TOKEN" | base64) is the variable through
// b64enc. A name that says where a secret is (REGISTRY_SECRET_NAME,
// PRIVATE_REGISTRY) and a pair's `key` are not secrets.
func TestWhatGoesIntoASecretIsSecret(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
: ${REGISTRY_SECRET_NAME:="nvcrio-registry"}
: ${PRIVATE_REGISTRY:="nvcr.io/ea-cnt"}
key=app.kubernetes.io/name
kubectl apply -f - <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: ${REGISTRY_SECRET_NAME}
  namespace: apps
stringData:
  GOOGLE: '${GOOGLE}'
  registry: ${PRIVATE_REGISTRY}
data:
  token: $(echo -n "${HF_TOKEN}" | base64)
EOF
kubectl wait -n apps pod -l $key=web --for=condition=Ready --timeout=60s
`})
	vars := map[string]string{}
	for _, v := range res.Model.Vars {
		d := "-"
		if v.Default != nil {
			d = *v.Default
		}
		vars[v.Name] = map[bool]string{true: "secret", false: "plain:" + d}[v.Secret]
	}
	want := map[string]string{"REGISTRY_SECRET_NAME": "plain:nvcrio-registry", "PRIVATE_REGISTRY": "secret", "GOOGLE": "secret", "HF_TOKEN": "secret"}
	if mustJSON(t, vars) != mustJSON(t, want) {
		t.Errorf("vars %v, want %v\n%s", vars, want, res.Spec)
	}
	if !strings.Contains(string(res.Spec), "token: ${HF_TOKEN | b64enc}") || !strings.Contains(string(res.Spec), "selector: app.kubernetes.io/name=web") {
		t.Errorf("spec\n%s", res.Spec)
	}
}

// kubectl create secret docker-registry is a dockerconfigjson Secret whose
// values go through toJson: a password with a quote stays valid JSON once
// khook substitutes it, and a literal password is a secret variable.
func TestDockerRegistrySecret(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl create secret docker-registry pull -n apps --docker-server=${REGISTRY:-ghcr.io} --docker-username='$oauthtoken' --docker-password="$NGC_API_KEY" --docker-email=me@example.com
kubectl create secret docker-registry lit -n apps --docker-username=bob --docker-password=hunter2xyz
`})
	if strings.Contains(string(res.Spec), "hunter2xyz") || len(res.Model.Steps) != 2 {
		t.Fatalf("spec\n%s", res.Spec)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "khook.yaml")
	if err := os.WriteFile(f, res.Spec, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(spec.LoadOptions{Files: []string{f}, Environ: []string{`KHOOK_SECRET_NGC_API_KEY=a"b\c`, "KHOOK_SECRET_LIT_PASSWORD=p"}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`{"auths":{"ghcr.io":{"username":"$oauthtoken","password":"a\"b\\c","email":"me@example.com"}}}`,
		`{"auths":{"https://index.docker.io/v1/":{"username":"bob","password":"p"}}}`} {
		var obj struct {
			Type       string            `yaml:"type"`
			StringData map[string]string `yaml:"stringData"`
		}
		if err := yaml.Unmarshal([]byte(s.Steps[i].Apply.Manifests[0].Inline), &obj); err != nil {
			t.Fatal(err)
		}
		var parsed any
		if got := obj.StringData[".dockerconfigjson"]; got != want || json.Unmarshal([]byte(got), &parsed) != nil || obj.Type != "kubernetes.io/dockerconfigjson" {
			t.Errorf("secret %d: %s %q, want %q", i, obj.Type, got, want)
		}
	}
}

// `[ $# -ge 3 ]` in a function is decided by the arguments of its call;
// what is said of a command's words is moot when it is not carried; a
// chart's .tgz URL is named with what to do.
func TestArgCountAndMootNotes(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
w() {
  if [ $# -ge 3 ]; then
    timeout="$3"
  else
    timeout="600s"
  fi
  kubectl wait -n "$1" pod/"$2" --for=condition=ready --timeout="$timeout"
}
w a web 1200s
helm install ./chart --generate-name -n ns ${EXTRA_OPTS:-}
helm install sail https://example.com/sail-1.0.0.tgz -n sail
`, "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n"})
	if st := res.Model.Steps; len(st) != 1 || st[0].Out.Timeout != "1200s" {
		t.Errorf("steps %v", res.Model.Commands)
	}
	if got := infoLines(res.Model, "EXTRA_OPTS"); len(got) != 0 {
		t.Errorf("moot notes at %v", got)
	}
	if nc := res.Model.NotCarried; len(nc) != 2 || !strings.Contains(nc[1].Why, "a packaged chart's URL, which khook does not download") {
		t.Errorf("not carried %v", nc)
	}
}

// A Secret a here-document writes with literal values (stringData, or
// base64 data) has them as secret variables, never in the spec.
func TestLiteralSecretsInHereDocuments(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl apply -f - <<EOF\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: x\nstringData:\n  password: hunter2xyz\ndata:\n  token: aHVudGVyM3h5eg==\nEOF\n"})
	spec := string(res.Spec)
	if strings.Contains(spec, "hunter2xyz") || strings.Contains(spec, "aHVudGVyM3h5eg==") || !strings.Contains(spec, `password: "${DB_PASSWORD}"`) || !strings.Contains(spec, `token: "${DB_TOKEN | b64enc}"`) {
		t.Errorf("spec\n%s", spec)
	}
	for _, v := range []string{"DB_PASSWORD", "DB_TOKEN"} {
		if d := res.Model.Var(v); d == nil || !d.Secret {
			t.Errorf("%s %+v", v, d)
		}
	}
}
