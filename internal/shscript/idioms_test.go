package shscript

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// The fixture script uses every idiom of docs/from-scripts.md.
func TestFixtureIdioms(t *testing.T) {
	res, s := load(t, "khook-fixture", "scripts/install.sh")
	want := []string{"apply-namespace-namespace", "cert-manager", "wait-crd-certificates-cert-manager-io", "apply-secret-api-token", "app",
		"apply-config-tmpl", "scale-deployment-app", "annotate-deployment-app", "wait-deployment-app", "status-deployment-app",
		"delete-job-migrate", "namespace-monitoring", "apply-configmap-settings"}
	if got := stepNames(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("steps\n got %v\nwant %v", got, want)
	}
	checkOrder(t, res, s)
	by := map[string]int{}
	for i, st := range s.Steps {
		by[st.Name] = i
	}
	// A function of a sourced file, called with shift and "$@"; repo add folded; Helm's typing.
	cm := s.Steps[by["cert-manager"]]
	if h := cm.Helm; h.Chart != "cert-manager" || h.Repo != "https://charts.jetstack.io" || h.Version != "v1.14.4" || h.Namespace != "cert-manager" || !h.CreateNamespace || !h.Wait {
		t.Errorf("cert-manager %+v", h)
	}
	if got := toJSON(cm.Helm.Values); got != `{"crds":{"enabled":true},"extraArgs":["--v=2","--enable-certificate-owner-ref"],"podLabels":{"build":"007"},"webhook":{"tolerations":[{"key":"infra"}]}}` {
		t.Errorf("values %s", got)
	}
	if cm.Timeout.String() != "10m0s" {
		t.Errorf("timeout %s", cm.Timeout)
	}
	if w := s.Steps[by["wait-crd-certificates-cert-manager-io"]].Wait; w.For != "condition=Established" || w.On != "crd/certificates.cert-manager.io" {
		t.Errorf("poll loop → %+v", w)
	}
	// cd "$REPO_ROOT": the chart and values are relative to it; -f - heredoc inline.
	app := s.Steps[by["app"]].Helm
	if app.Chart != "./charts/app" || app.ValuesFrom[0].File != "./values/app.yaml" || app.Namespace != "platform" {
		t.Errorf("app %+v", app)
	}
	if got := toJSON(app.Values); got != `{"auth":{"password":"x"},"image":{"tag":"1.2.3"},"replicaCount":2}` {
		t.Errorf("app values %s", got)
	}
	// if/case on a variable → when:.
	if w := s.Steps[by["apply-config-tmpl"]].When; w != `vars.get("ENVIRONMENT", "dev") == "prod"` {
		t.Errorf("when %q", w)
	}
	if s.Steps[by["scale-deployment-app"]].Skip != "" || s.Steps[by["annotate-deployment-app"]].Skip == "" {
		t.Errorf("case on ENVIRONMENT=dev: scale runs, annotate is skipped")
	}
	if st := s.Steps[by["status-deployment-app"]]; st.Rollout.Status != "deployment/app" || st.Timeout.String() != "5m0s" {
		t.Errorf("rollout %+v %s", st.Rollout, st.Timeout)
	}
	if d := s.Steps[by["delete-job-migrate"]].Delete; d.Resource != "job/migrate" || !d.IgnoresNotFound() {
		t.Errorf("delete %+v", d)
	}
	if in := s.Steps[by["apply-configmap-settings"]].Apply.Manifests[0].Inline; !strings.Contains(in, "namespace: platform") || !strings.Contains(in, `env: "dev"`) {
		t.Errorf("envsubst → %q", in)
	}
	for _, v := range []string{"ENVIRONMENT", "NAMESPACE"} {
		if d := res.Model.Var(v); d == nil || d.Default == nil {
			t.Errorf("variable %s with its default not declared", v)
		}
	}
	checkNotCarried(t, res.Model, map[int]string{15: "kind create", 60: "docker build", 61: "port-forward"})
}

func checkNotCarried(t *testing.T, m *importer.Model, want map[int]string) {
	t.Helper()
	got := map[int]string{}
	for _, n := range m.NotCarried {
		got[n.Line] = n.What
	}
	for line, what := range want {
		if !strings.Contains(got[line], what) {
			t.Errorf("line %d: not carried %q, want %q", line, got[line], what)
		}
	}
	if len(got) != len(want) {
		t.Errorf("not carried %v, want %d", m.NotCarried, len(want))
	}
	if m.Verdict() != importer.Partial {
		t.Errorf("verdict %s", m.Verdict())
	}
}

// No secret the script reads or sets is written anywhere: a token read
// from a file, a literal password, --set auth.password, a Secret's literals.
func TestSecretsNeverWritten(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "token.txt", "tok-from-file-31337\n")
	write(t, dir, "install.sh", `#!/bin/sh
TOKEN=$(cat token.txt)
PASSWORD=${PASSWORD:-pw-default-4242}
ADMIN_PASSWORD="literal-pw-9999"
helm repo add bitnami https://charts.bitnami.com/bitnami
helm upgrade --install db bitnami/postgresql --set auth.password=$PASSWORD --set auth.postgresPassword=inline-pw-5555 --set-string auth.token="$TOKEN"
kubectl create secret generic admin --from-literal=password="$ADMIN_PASSWORD" --from-literal=user=admin-user-7777 --dry-run=client -o yaml | kubectl apply -f -
`)
	res, err := Import("install.sh", Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"tok-from-file-31337", "pw-default-4242", "literal-pw-9999", "inline-pw-5555", "admin-user-7777"} {
		if strings.Contains(string(res.Spec), secret) {
			t.Errorf("the spec holds %q:\n%s", secret, res.Spec)
		}
		if strings.Contains(toJSON(res.Model), secret) {
			t.Errorf("the model holds %q", secret)
		}
	}
	for _, v := range []string{"TOKEN", "PASSWORD", "ADMIN_PASSWORD", "AUTH_POSTGRESPASSWORD", "ADMIN_USER"} {
		if d := res.Model.Var(v); d == nil || !d.Secret || d.Default != nil {
			t.Errorf("variable %s: %+v, want a secret without default", v, d)
		}
	}
	if _, err := importer.Validate(res.Model, res.Spec); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Bad input is one sentence at FILE:LINE and nothing to write.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "broken.sh", "echo ok\nif then fi\n")
	write(t, dir, "sources.sh", "echo ok\nsource ./lib/missing.sh\n")
	write(t, dir, "binary.sh", "\x7fELF\x00\x01")
	write(t, dir, "device.sh", "source /dev/zero\n") // read to its end, it never ends
	for file, want := range map[string]string{
		"broken.sh":  "broken.sh:2: bash cannot parse it",
		"sources.sh": "sources.sh:2: it sources lib/missing.sh, which cannot be read",
		"binary.sh":  "binary.sh:1: it is a binary file",
		"device.sh":  "device.sh:1: it sources /dev/zero, which cannot be read (not a regular file)",
	} {
		_, err := Import(file, Options{Dir: dir})
		var ie *InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%s: %v, want %q…", file, err, want)
		}
	}
}

func BenchmarkImportScript(b *testing.B) {
	// The largest script of the corpus that is run, not only sourced (a
	// library such as kserve's common.sh makes no step of its own).
	type script struct {
		dir, file string
		size      int64
	}
	var scripts []script
	_ = filepath.Walk(corpus, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".sh") {
			dir := filepath.Join(corpus, strings.Split(strings.TrimPrefix(p, corpus+"/"), "/")[0])
			file, _ := filepath.Rel(dir, p)
			scripts = append(scripts, script{dir, file, fi.Size()})
		}
		return nil
	})
	sort.Slice(scripts, func(i, j int) bool { return scripts[i].size > scripts[j].size })
	var largest *script
	for i := range scripts {
		if res, err := Import(scripts[i].file, Options{Dir: scripts[i].dir}); err == nil && len(res.Model.Steps) > 0 {
			largest = &scripts[i]
			break
		}
	}
	if largest == nil {
		b.Fatal("no script of the corpus imports to a step")
	}
	b.Logf("%s/%s (%d bytes)", filepath.Base(largest.dir), largest.file, largest.size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Import(largest.file, Options{Dir: largest.dir}); err != nil {
			b.Fatal(err)
		}
	}
}
