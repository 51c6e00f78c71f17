package helmfile

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trial 46z (run once, on cc9eca6) showed, each cut down.
func TestImportTrial46z(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		// opencloud: Secret manifests in a string of extraResources (D1),
		// the last line of a document ending in blanks; two passwords under
		// a comment that names both (D2)
		"helmfile.yaml": `releases:
  - name: app
    namespace: app
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - extraResources:
          - |
            apiVersion: v1
            kind: Secret
            metadata:
              name: ldap
            stringData:
              bind-password: c4nary-bind-pw-1
            ---   
            apiVersion: v1
            kind: Secret
            metadata:
              name: s3
            stringData:
              accessKey: c4nary-access-2
  - name: ldap
    namespace: ldap
    chart: oci://r.example/ldap
    version: 1.0.0
    values:
      - global:
          # TODO: change adminPassword and configPassword
          adminPassword: adminPass
          configPassword: configPass
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Spec)
	for _, secret := range []string{"c4nary-bind-pw-1", "c4nary-access-2", "adminPass\n", "configPass\n"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q is written in plain text:\n%s", secret, out)
		}
	}
	for _, want := range []string{
		"- |\n            apiVersion: v1\n            kind: Secret\n",
		"bind-password: ${STRING_DATA_BIND_PASSWORD|toJson}\n            ---\n",
		"accessKey: ${STRING_DATA_ACCESS_KEY|toJson}\n",
		"helmfile.yaml:14: warning: release app values extraResources.0.stringData.bind-password",
		"the blanks that end some of its lines are dropped",
		"helmfile.yaml:29: warning: release ldap values global.adminPassword",
		"helmfile.yaml:30: warning: release ldap values global.configPassword",
	} {
		if !strings.Contains(out+warningsOf(res), want) {
			t.Errorf("missing %q in:\n%s\n%s", want, out, warningsOf(res))
		}
	}
}

func warningsOf(res *Result) string {
	var b strings.Builder
	for _, r := range res.Releases {
		for _, n := range r.Info {
			b.WriteString(n.Loc.String() + ": warning: " + n.What + ": " + n.Why + "\n")
		}
	}
	return b.String()
}

// derivePassword (scrypt) runs once per distinct arguments in an import,
// and not at all for the derive pass's canary secrets, whose outputs only
// need to differ (mijnbureau's import spent most of its time there).
func TestDerivePasswordMemoized(t *testing.T) {
	calls := 0
	d := memoDerive(func(c uint32, typ, pw, user, site string) string { calls++; return pw + user + site })
	for range 3 {
		if d(1, "long", "master-pw-1", "synapse", "x") != "master-pw-1synapsex" {
			t.Fatal("memoized value differs")
		}
	}
	a, b := d(1, "long", canary("MASTER"), "a", "x"), d(1, "long", canary("MASTER"), "b", "x")
	if calls != 1 || a == b || !strings.HasPrefix(a, canaryPrefix) {
		t.Errorf("%d scrypt calls, canary outputs %q %q; want 1 call and distinct canary outputs", calls, a, b)
	}
}

// A helmfile's own kubeContext: is the run's --context, a warning; two
// parts naming different contexts send releases to two clusters, which one
// khook run does not: a partial naming both (trial 46n's rriv-cloud).
func TestImportKubeContext(t *testing.T) {
	dir := t.TempDir()
	rel := "releases:\n  - name: %s\n    namespace: x\n    chart: oci://r.example/%s\n    version: 1.0.0\n"
	write(t, dir, map[string]string{
		"helmfile.yaml": "helmfiles:\n  - path: app.yaml\n  - path: vault.yaml\n",
		"app.yaml":      "kubeContext: prod-app\n" + fmt.Sprintf(rel, "app", "app"),
		"vault.yaml":    "kubeContext: prod-vault\n" + fmt.Sprintf(rel, "vault", "vault"),
		"one.yaml":      "kubeContext: prod-app\n" + fmt.Sprintf(rel, "app", "app"),
	})
	res, err := Import(dir, "one.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict() != Faithful || !strings.Contains(string(res.Spec), "one.yaml:1: kubeContext: prod-app: khook runs against the --context") {
		t.Errorf("one context: %v, want faithful with a warning:\n%s", res.Verdict(), res.Spec)
	}
	res, err = Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict() != Partial || !strings.Contains(string(res.Spec), "vault.yaml:1: kubeContext: prod-vault: its releases go to context prod-vault and those of app.yaml to prod-app") {
		t.Errorf("two contexts: %v, want partial naming both:\n%s", res.Verdict(), res.Spec)
	}
}

// A hook that only deletes at uninstall what another hook of the release
// applied (fiware's iam: presync apply -f config/x.yaml, preuninstall
// delete -f config/x.yaml) is what khook destroy does with the apply
// step: noted, not a loss; a PVC's file stays one (destroy keeps data).
func TestImportUninstallHookUndoesApply(t *testing.T) {
	dir := t.TempDir()
	hooks := func(file string) string {
		return "    hooks:\n      - events: [\"presync\"]\n        command: kubectl\n        args: [apply, -n, \"{{ .Release.Namespace }}\", -f, ./config/" + file + "]\n" +
			"      - events: [\"preuninstall\"]\n        command: kubectl\n        args: [delete, -n, \"{{ .Release.Namespace }}\", -f, ./config/" + file + "]\n"
	}
	write(t, dir, map[string]string{
		"config/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
		"config/pvc.yaml": "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
		"helmfile.yaml": "releases:\n  - name: a\n    namespace: iam\n    chart: oci://r.example/a\n    version: 1.0.0\n" + hooks("cm.yaml") +
			"  - name: b\n    namespace: iam\n    chart: oci://r.example/b\n    version: 1.0.0\n" + hooks("pvc.yaml"),
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Releases {
		switch r.Resolved.Name {
		case "a":
			if r.Verdict != Faithful || !strings.Contains(warningsOf(res), "which khook destroy deletes itself with the step that applied it") {
				t.Errorf("a: %v %v, want faithful with a note", r.Verdict, r.NotCarried)
			}
		case "b":
			if r.Verdict != Partial {
				t.Errorf("b: %v, want partial: destroy keeps the PVC", r.Verdict)
			}
		}
	}
}

// A credential in a string of YAML that cannot become a variable in place
// (a key written as a block) leaves the whole string out: never written.
func TestImportCredentialInTextLeftOut(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: app
    namespace: app
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - extraResources:
          - |
            apiVersion: v1
            kind: Secret
            metadata:
              name: tls
            stringData:
              tls.key: |
                c4nary-block-key-1
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.Spec), "c4nary-block-key-1") || res.Verdict() != Partial ||
		!strings.Contains(string(res.Spec), "left out, never written") {
		t.Errorf("want the string left out and the release partial:\n%s", res.Spec)
	}
}
