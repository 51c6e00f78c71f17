package helmfile

import (
	"strings"
	"testing"
)

// What held-out trial 46w (run once, on 5f3362e) showed in hooks that run
// a script, each cut down: a note at the script's own line (D1); a value
// the script computes from the cluster stays required, so no default
// decides a delete for the run (D3: vault-keys deleted on every apply);
// the variable `while read` reads is the loop's (D5).
func TestImportHookScriptsTrial46w(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: secrets-config
    namespace: vault
    chart: oci://r.example/c
    version: 1.0.0
    hooks:
      - events: ["presync"]
        command: "./cleanup.sh"
`,
		"cleanup.sh": `#!/bin/bash
NS="vault"
vault_running=$(kubectl get pods -n "$NS" -l app=vault --no-headers 2>/dev/null | head -1)
vault_initialized=false
if [[ -n "$vault_running" ]]; then
  if kubectl exec -n "$NS" vault-0 -- vault status | grep -q '"sealed": false'; then
    vault_initialized=true
  fi
fi
if [[ "$vault_initialized" != "true" ]]; then
  kubectl delete secret vault-keys -n "$NS" --ignore-not-found
fi
kubectl get jobs -n "$NS" --no-headers | awk '{print $1}' | while read -r job; do
  kubectl delete job "$job" -n "$NS" --ignore-not-found
done
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vault_running", "vault_initialized", "job"} {
		if v := varNamed(res, name); v == nil || !v.Required || v.Default != nil {
			t.Errorf("%s is %+v, want required, no default:\n%s", name, v, res.Spec)
		}
	}
	if v := varNamed(res, "job"); v != nil && strings.Contains(v.Description, "environment") {
		t.Errorf("job is described as the environment's: %s", v.Description)
	}
	found := false
	for _, r := range res.Releases {
		for _, n := range r.NotCarried {
			if n.Loc.File == "cleanup.sh" && n.Loc.Line == 13 {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no note at cleanup.sh:13 (the loop): %v", res.Releases[0].NotCarried)
	}
}

// A URL whose password is a shell variable ($PGPASSWORD in an init
// container's command) holds no credential (trial 46w's D4: the whole
// command became a required secret variable).
func TestImportShellVariableInURLIsNoCredential(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: vault\n    namespace: vault\n    chart: oci://r.example/v\n    version: 1.0.0\n    values:\n      - args:\n          - echo \"postgres://$PGUSER:$PGPASSWORD@$PGHOST:5432/db\" > /tmp/x\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Vars) != 0 || !strings.Contains(string(res.Spec), "postgres://$PGUSER:$PGPASSWORD@") {
		t.Errorf("want the command as it is, no variable:\n%s", res.Spec)
	}
}

// A refused release's hooks are not carried with it: no command of them
// counts as a step (trial 46y's D1); a values template that looks for a
// local override file says it was rendered with the file absent (D3).
func TestImportTrial46y(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": `repositories:
  - name: gitrepo
    url: git+ssh://git@github.com/example/operator@charts?ref=v1.0.0
releases:
  - name: operator
    namespace: operator
    chart: gitrepo/operator
    version: v1.0.0
    hooks:
      - events: ["postsync"]
        command: "kubectl"
        args: ["apply", "-f", "config.yaml"]
  - name: app
    namespace: app
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - load.yaml.gotmpl
`,
		"config.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: operator\n",
		"load.yaml.gotmpl": "{{- $p := printf \"%s/my-dev.yaml\" .Release.Name }}\n{{- if isFile $p }}\n{{ readFile $p }}\n{{- end }}\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Spec), "helm/kubectl commands: 1, of which 0 became steps") {
		t.Errorf("the refused release's hook counts as a step:\n%s", res.Spec)
	}
	if !strings.Contains(string(res.Spec), "it looks for app/my-dev.yaml each time helmfile runs; rendered once, with it absent at import") {
		t.Errorf("the override file the template looks for is not said:\n%s", res.Spec)
	}
}

// A literal credential is said at its own release's line, not at an
// earlier release's line that holds the same value and the key's name as
// text (trial 46y's D2).
func TestImportCredentialNoteAtItsReleasesLine(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: db\n    namespace: demo\n    chart: oci://r.example/db\n    version: 1.0.0\n    values:\n      - motd: \"c4nary-dbpw is the password\"\n  - name: client\n    namespace: demo\n    chart: oci://r.example/client\n    version: 1.0.0\n    values:\n      - settings:\n          password: c4nary-dbpw\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range res.Releases {
		for _, n := range r.Info {
			if strings.Contains(n.What, "settings.password") {
				found = true
				if n.Loc.Line != 14 {
					t.Errorf("the note is at line %d, want 14", n.Loc.Line)
				}
			}
		}
	}
	if !found {
		t.Errorf("no note of the credential: %v", res.Releases)
	}
}
