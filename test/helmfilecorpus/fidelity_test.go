package helmfilecorpus

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/test/helmcli"
	"github.com/khook/khook/test/helmfilecli"
)

// The comparison compares what each tool would do in the same environment
// (trial 46m's H1, H2, D3 and H4), on a helmfile written here and the real
// helmfile: a release whose condition is false is one helmfile sync skips
// (helmfile build prints it); a release without namespace is installed by
// helm into "default" in the test's environment, as by khook; the secret
// variables the import declares for the files the helmfile reads take the
// files' content, as a user sets them; and the diff, when there is one,
// shows no secret.
func TestComparisonIsFaithfulToBothTools(t *testing.T) {
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7throwaway\n-----END PRIVATE KEY-----\n"
	sshKey := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQthrowaway\n-----END OPENSSH PRIVATE KEY-----\n"
	root := filepath.Join(t.TempDir(), "small")
	for name, data := range map[string]string{
		"helmfile.yaml.gotmpl": `environments:
  default:
    values:
      - grist:
          enabled: false
        app:
          enabled: true
---
releases:
  - name: grist
    namespace: apps
    chart: ./charts/app
    condition: grist.enabled
  - name: app
    chart: ./charts/app
    condition: app.enabled
    values:
      - auth:
          password: lit-pw-fidelity
      - certs.yaml.gotmpl
    set:
      - name: caKey
        file: ./ca.key
`,
		"certs.yaml.gotmpl":     "tls:\n  key: {{ readFile \"./tls/server.key\" | b64enc | quote }}\n  ssh: {{ readFile \"./ssh_key\" | quote }}\nreplicas: 2\nbroker: {{ requiredEnv \"BROKER_URL\" }}\n",
		"ca.key":                key,
		"tls/server.key":        key,
		"ssh_key":               sshKey,
		"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := "helmfile.yaml.gotmpl"
	// A URL with a password in a variable not named like a secret, and a
	// literal credential: secret variables the user sets as in their file
	// (trial 46n's D3, S1).
	e := entry{Dir: "small", Inputs: []string{in}, Env: map[string]string{"BROKER_URL": "amqp://app:fid-url-pw@broker:5672"}}
	out, err := helmfileBuild(helmfilecli.Binary(t), helmcli.Binary(t), root, in, e)
	if err != nil {
		t.Fatal(err)
	}
	want, dangling, err := resolveBuild(out, root, in)
	if err != nil || len(dangling) > 0 {
		t.Fatalf("%v %v", err, dangling)
	}
	if len(want) != 1 || want[0].Name != "app" || want[0].Namespace != "default" {
		t.Fatalf("helmfile's side: %+v; want only app (grist's condition is false), in namespace default", want)
	}
	got, verdict, code, secrets := importResolve(t, root, in, e, want)
	if code != 0 {
		t.Errorf("the import is not faithful: %s", verdict)
	}
	if _, ok := secrets.literals["AUTH_PASSWORD"]; !ok || !secrets.declared["BROKER_URL"] {
		t.Errorf("the literal password and the URL's password are not secret variables: %v %v", secrets.literals, secrets.declared)
	}
	if !cmp.Equal(want, got) {
		t.Errorf("the comparison differs (-helmfile +khook; secrets masked):\n%s", secrets.diff(want, got))
	}

	// Where they differ, the diff shows where, never a secret: not the
	// key's lines, not its base64, not a value the spec takes from a
	// secret variable.
	got[0].Values = jsonForm(got[0].Values)
	got[0].Values["tls"].(map[string]any)["key"] = "another"
	want[0].Values = jsonForm(want[0].Values)
	want[0].Values["leftover"] = key
	d := secrets.diff(want, got)
	for _, secret := range []string{"MIIEvQIBADAN", "b3BlbnNzaC1rZXkt", base64.StdEncoding.EncodeToString([]byte(key))[:40]} {
		if strings.Contains(d, secret) {
			t.Errorf("the diff shows a secret (%s):\n%s", secret, d)
		}
	}
	for _, shown := range []string{"<secret: helmfile's, ", "<secret: khook's, 7 characters>", "leftover"} {
		if !strings.Contains(d, shown) {
			t.Errorf("the diff lacks %q:\n%s", shown, d)
		}
	}
}

// conditionEnabled reads a condition as helmfile v1.8.0 does.
func TestConditionEnabled(t *testing.T) {
	values := map[string]any{"a": map[string]any{"enabled": true}, "b": map[string]any{"enabled": "yes"}, "c": "x"}
	for cond, want := range map[string]bool{"": true, "TRUE": true, "false": false, "a.enabled": true, "b.enabled": false} {
		if got, err := conditionEnabled(cond, values); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", cond, got, err, want)
		}
	}
	for _, cond := range []string{"a.on", "z.enabled", "c.enabled"} {
		if _, err := conditionEnabled(cond, values); err == nil {
			t.Errorf("%q: no error, helmfile refuses it", cond)
		}
	}
}
