package helmfile

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/redact"
)

// lookupOf is an environment of exactly env.
func lookupOf(env map[string]string) func(string) (string, bool) {
	return func(n string) (string, bool) { v, ok := env[n]; return v, ok }
}

// everything is what an import wrote and said: spec, files, notes.
func everything(res *Result) string {
	var b strings.Builder
	b.Write(res.Spec)
	for _, f := range res.Files {
		b.Write(f.Data)
	}
	for _, n := range append(append([]Note{}, res.NotCarried...), res.Info...) {
		b.WriteString(n.String() + "\n")
	}
	for _, r := range res.Releases {
		for _, n := range append(append([]Note{}, r.NotCarried...), r.Info...) {
			b.WriteString(n.String() + "\n")
		}
	}
	return b.String()
}

const taggedHelmfile = `releases:
  - name: tagged
    namespace: demo
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - tagged.yaml.gotmpl
  - name: other
    namespace: demo
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - replicas: 2
`

// A tag's name in a variable named *_TAG_KEY is no secret: used as a map
// key it is rendered as helmfile renders it, and the import is faithful
// (trial 46n's D1: AWS_DEPLOYMENT_TAG_KEY refused the whole import).
func TestImportTagKeyVariableIsNoSecret(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": taggedHelmfile,
		"tagged.yaml.gotmpl":   "extraVolumeTags:\n  {{ requiredEnv \"AWS_DEPLOYMENT_TAG_KEY\" }}: {{ requiredEnv \"DEPLOYMENT_TAG_VALUE\" }}\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{"AWS_DEPLOYMENT_TAG_KEY": "Deployment", "DEPLOYMENT_TAG_VALUE": "ci"})})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Verdict(); v != Faithful {
		t.Errorf("verdict %v, want faithful:\n%s", v, everything(res))
	}
	if tags := res.Releases[0].Resolved.Values["extraVolumeTags"]; tags.(map[string]any)["Deployment"] != "ci" {
		t.Errorf("extraVolumeTags %v", tags)
	}
}

// A secret used as a map key, where no ${NAME} can stand, makes only its
// release partial, named at its values, the key left out; no message or
// file holds the secret (trial 46n's D1 and D1c: the whole import was
// refused and the refusal printed the key).
func TestImportSecretAsMapKeyMakesOnlyItsReleasePartial(t *testing.T) {
	const token = "tok-3f9a1c-not-for-print"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": taggedHelmfile,
		"tagged.yaml.gotmpl":   "extraTags:\n  {{ requiredEnv \"API_TOKEN\" }}: x\n  team: core\n",
	})
	rd := redact.New()
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{"API_TOKEN": token}), Redactor: rd})
	if err != nil {
		t.Fatal(err)
	}
	tagged, other := res.Releases[0], res.Releases[1]
	if tagged.Verdict != Partial || other.Verdict != Faithful {
		t.Errorf("verdicts %v, %v; want partial, faithful", tagged.Verdict, other.Verdict)
	}
	if len(tagged.NotCarried) != 1 || tagged.NotCarried[0].Loc.Line != 6 || !strings.Contains(tagged.NotCarried[0].String(), "values extraTags") || !strings.Contains(tagged.NotCarried[0].Why, "API_TOKEN") {
		t.Errorf("notes %v; want one at helmfile.yaml.gotmpl:6 naming extraTags and API_TOKEN", tagged.NotCarried)
	}
	all := everything(res)
	if strings.Contains(all, token) {
		t.Errorf("the secret is written or said:\n%s", all)
	}
	if !strings.Contains(all, "team: core") {
		t.Errorf("the rest of the map is not written:\n%s", all)
	}
	if rd.String(token) == token {
		t.Error("the secret is not registered with the redactor handed in")
	}
}

// Where the secret decides more than a values entry (a release's name),
// the import is refused: the message names the variable, never its value,
// and its advice works for a variable read with requiredEnv, which cannot
// be imported unset (trial 46n's D1c, D1d).
func TestImportRefusalForASecretIsMaskedAndItsAdviceWorks(t *testing.T) {
	const token = "tok-77c2e0-not-for-print"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "releases:\n  - name: app-{{ requiredEnv \"API_TOKEN\" | sha1sum | trunc 6 }}-{{ requiredEnv \"API_TOKEN\" }}\n    namespace: demo\n    chart: oci://r.example/app\n    version: 1.0.0\n",
	})
	_, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{"API_TOKEN": token})})
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "API_TOKEN=x") {
		t.Fatalf("got %v; want a refusal without the secret, advising a short stand-in", err)
	}
	// The advice, followed.
	if _, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{"API_TOKEN": "x"})}); err != nil {
		t.Errorf("the advice fails: %v", err)
	}
	// Unset, the helmfile refuses as helmfile does: the advice did not say so.
	if _, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(nil)}); err == nil || !strings.Contains(err.Error(), "requiredEnv") {
		t.Errorf("unset: got %v, want requiredEnv's refusal", err)
	}
}

// A need of a release the import refuses is not carried: the needing
// release says so at its needs and is partial, since it runs without
// waiting for what helmfile finishes first (trial 46n's D2: dropped
// silently, the release counted faithful). Both ways a release is
// refused: the spec refuses its step (a git+ssh repository), or it has
// no chart the import can name (neither a repository's nor a folder).
func TestImportNeedOfARefusedReleaseIsSaid(t *testing.T) {
	for name, api := range map[string]string{
		"spec refuses the step": "repositories:\n  - name: api\n    url: git+ssh://git@github.com/example/api@charts?ref=main\nreleases:\n  - name: api\n    namespace: demo\n    chart: api/api\n",
		"no chart":              "releases:\n  - name: api\n    namespace: demo\n    chart: api\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{
				"helmfile.yaml": api + "  - name: gateway\n    namespace: demo\n    chart: oci://r.example/gateway\n    version: 1.0.0\n    needs:\n      - api\n",
			})
			res, err := Import(dir, "helmfile.yaml", Options{})
			if err != nil {
				t.Fatal(err)
			}
			var gw *Release
			for _, r := range res.Releases {
				if r.Resolved.Name == "gateway" {
					gw = r
				}
			}
			if gw.Verdict != Partial || len(gw.NotCarried) != 1 || !strings.Contains(gw.NotCarried[0].String(), "needs") || !strings.Contains(gw.NotCarried[0].Why, "without waiting for") {
				t.Fatalf("gateway %v, notes %v; want partial, its need named", gw.Verdict, gw.NotCarried)
			}
			if want := strings.Count(api, "\n") + 5; gw.NotCarried[0].Loc.Line != want {
				t.Errorf("the note is at line %d, want %d (needs:)", gw.NotCarried[0].Loc.Line, want)
			}
			if strings.Contains(string(res.Spec), "needs: [api]") {
				t.Errorf("the spec needs a step that is not written:\n%s", res.Spec)
			}
		})
	}
}

// A literal credential in the values the import writes — inline values:,
// set:, a values template rendered into a generated file — is a secret
// variable, never the literal, with a note at its line; the release stays
// faithful (trial 46n's S1: sites-faciles' auth.password was copied).
func TestImportLiteralCredentialIsASecretVariable(t *testing.T) {
	const pw, root, tmpl = "lit-pw-51d0e", "lit-root-9c2b7", "lit-tmpl-0aa41"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: db
    namespace: demo
    chart: oci://r.example/postgresql
    version: 1.0.0
    values:
      - auth:
          username: app
          password: ` + pw + `
          existingSecret: ""
          passwordSecretName: db-auth
      - tmpl.yaml.gotmpl
    set:
      - name: minio.auth.rootPassword
        value: ` + root + `
`,
		"tmpl.yaml.gotmpl": "replication:\n  password: {{ \"" + tmpl + "\" }}\n  user: repl\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := everything(res)
	for _, lit := range []string{pw, root, tmpl} {
		if strings.Contains(all, lit) {
			t.Errorf("the literal %s is written or said:\n%s", lit, all)
		}
	}
	for _, want := range []string{"AUTH_PASSWORD: {type: string, secret: true", "AUTH_ROOT_PASSWORD: {type: string, secret: true", "REPLICATION_PASSWORD: {type: string, secret: true",
		"rootPassword: ${AUTH_ROOT_PASSWORD|toJson}", "password: ${REPLICATION_PASSWORD|toJson}", "passwordSecretName: db-auth", "user: repl",
		"helmfile.yaml:9: release db values auth.password: the helmfile holds it in plain text", "tmpl.yaml.gotmpl:2: release db values replication.password"} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}
	if v := res.Verdict(); v != Faithful {
		t.Errorf("verdict %v, want faithful", v)
	}
}

// A URL with a password in a variable not named like a secret is a
// secret variable where it is rendered (trial 46n's D3: hyperfleet's
// RABBITMQ_URL was written into values files).
func TestImportURLWithPasswordIsASecret(t *testing.T) {
	const url = "amqp://app:url-pw-3e1f@broker:5672"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml":      "releases:\n  - name: worker\n    namespace: demo\n    chart: oci://r.example/worker\n    version: 1.0.0\n    values:\n      - worker.yaml.gotmpl\n",
		"worker.yaml.gotmpl": "broker:\n  url: {{ requiredEnv \"BROKER_URL\" }}\n  literal: https://u:lit-url-pw-77@host/x\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{Env: lookupOf(map[string]string{"BROKER_URL": url})})
	if err != nil {
		t.Fatal(err)
	}
	all := everything(res)
	for _, secret := range []string{"url-pw-3e1f", "lit-url-pw-77"} {
		if strings.Contains(all, secret) {
			t.Errorf("%s is written or said:\n%s", secret, all)
		}
	}
	for _, want := range []string{"BROKER_URL: {type: string, secret: true", "url: ${BROKER_URL}", "literal: ${BROKER_LITERAL|toJson}"} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}
	if v := res.Verdict(); v != Faithful {
		t.Errorf("verdict %v, want faithful", v)
	}
}

// A later values file sets the literal's key too: moved into values:, it
// would win, so it is left out and only that release is partial.
func TestImportLiteralCredentialOverriddenLaterIsLeftOut(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: db\n    namespace: demo\n    chart: oci://r.example/db\n    version: 1.0.0\n    values:\n      - auth:\n          password: lit-first-8d\n      - later.yaml\n",
		"later.yaml":    "auth:\n  password: from-later\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Releases[0]; r.Verdict != Partial || strings.Contains(everything(res), "lit-first-8d") {
		t.Errorf("verdict %v, want partial without the literal:\n%s", r.Verdict, everything(res))
	}
}

// A requiredEnv variable stays required when another template reads it
// with env … | default: helmfile refuses when it is unset (trial 46n's
// O1b: the spec declared the other template's default, and unset khook
// deployed where helmfile refuses).
func TestImportRequiredEnvStaysRequiredDespiteAnotherDefault(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "values:\n  - namespace: {{ requiredEnv \"NAMESPACE\" }}\n---\nreleases:\n  - name: app\n    namespace: {{ .Values.namespace }}\n    chart: oci://r.example/app\n    version: 1.0.0\n    values:\n      - app.yaml.gotmpl\n",
		"app.yaml.gotmpl":      "claim: \"system:serviceaccount:{{ env \"NAMESPACE\" | default \"team\" }}:app\"\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{"NAMESPACE": "team-e2e"})})
	if err != nil {
		t.Fatal(err)
	}
	var ns *importer.Var
	for _, v := range res.Vars {
		if v.Name == "NAMESPACE" {
			ns = v
		}
	}
	if ns == nil || !ns.Required || ns.Default != nil {
		t.Errorf("NAMESPACE is %+v, want required without a default:\n%s", ns, res.Spec)
	}
}

// A placeholder that names itself (password: password) is written as a
// secret variable too, but not masked in the notes, where it would garble
// every "password" (sites-faciles); a literal from outside the release's
// file (an environment's values) is noted at the release's values:.
func TestImportLiteralCredentialNotes(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "environments:\n  default:\n    values:\n      - env.yaml\n---\nreleases:\n  - name: db\n    namespace: demo\n    chart: oci://r.example/db\n    version: 1.0.0\n    values:\n      - auth:\n          password: password\n        broker:\n          url: {{ .Values.url }}\n",
		"env.yaml":             "url: amqp://guest:guest-pw@rabbitmq:5672\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := everything(res)
	for _, want := range []string{"helmfile.yaml.gotmpl:13: release db values auth.password: the helmfile holds it", "helmfile.yaml.gotmpl:11: release db values broker.url: the helmfile holds it"} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "guest-pw") || strings.Contains(all, "password: password") {
		t.Errorf("a literal is written:\n%s", all)
	}
}
