package helmfile

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// varNamed is the import's variable name, or nil.
func varNamed(res *Result, name string) *importer.Var {
	for _, v := range res.Vars {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// A secret read with requiredEnv is a required secret variable: helmfile
// refuses to render without it, so unset khook must not deploy "" (trial
// 46p's D5: ais-k8s's GRAFANA_PASSWORD was optional).
func TestImportRequiredEnvSecretIsRequired(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "releases:\n  - name: grafana\n    namespace: demo\n    chart: oci://r.example/grafana\n    version: 1.0.0\n    values:\n      - adminPassword: {{ requiredEnv \"GRAFANA_PASSWORD\" }}\n        viewerPassword: {{ env \"VIEWER_PASSWORD\" }}\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{"GRAFANA_PASSWORD": "gpw-81c2", "VIEWER_PASSWORD": "vpw-11d0"})})
	if err != nil {
		t.Fatal(err)
	}
	if v := varNamed(res, "GRAFANA_PASSWORD"); v == nil || !v.Secret || !v.Required {
		t.Errorf("GRAFANA_PASSWORD is %+v, want a required secret:\n%s", v, res.Spec)
	}
	if v := varNamed(res, "VIEWER_PASSWORD"); v == nil || !v.Secret || v.Required {
		t.Errorf("VIEWER_PASSWORD is %+v, want an optional secret (env, not requiredEnv):\n%s", v, res.Spec)
	}
}

// Values under credential-looking keys that are no credential stay as the
// helmfile has them: the name of a key of a Secret, a boolean, etcd's
// cluster id (trial 46p's D2: civitas's were optional secret variables,
// "" unset). A real credential beside them is a required secret variable.
func TestImportKeyNamesAndFlagsAreNoCredentials(t *testing.T) {
	const pw = "lit-pw-6ab1c"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: gateway
    namespace: demo
    chart: oci://r.example/gateway
    version: 1.0.0
    values:
      - secret:
          adminKeySecretName: gateway-admin-credentials
          adminKeySecretKey: admin
        extraSecretEnvVars:
          - name: OIDC_SESSION_SECRET
            secretName: gateway-oidc-session
            secretKey: secret
        tls:
          certSecretKey: tls.crt
        auth:
          plainTextPassword: 'false'
          password: ` + pw + `
        etcd:
          initialClusterToken: demo-etcd-cluster
        storage:
          secretKey: s3cr3tValue-xyz9
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := everything(res)
	for _, want := range []string{"adminKeySecretKey: admin", "secretKey: secret", "certSecretKey: tls.crt", "plainTextPassword: \"false\"",
		"initialClusterToken: demo-etcd-cluster", "password: ${AUTH_PASSWORD|toJson}", "secretKey: ${STORAGE_SECRET_KEY|toJson}"} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, pw) || strings.Contains(all, "s3cr3tValue-xyz9") {
		t.Errorf("a credential is written:\n%s", all)
	}
	for _, name := range []string{"AUTH_PASSWORD", "STORAGE_SECRET_KEY"} {
		if v := varNamed(res, name); v == nil || !v.Secret || !v.Required {
			t.Errorf("%s is %+v, want a required secret", name, v)
		}
	}
	if n := len(res.Vars); n != 2 {
		t.Errorf("%d variables, want 2:\n%s", n, res.Spec)
	}
}

// A credential in a name/value list (a Kubernetes env var) is a secret
// variable named after it, as the same value under secretKey: is (trial
// 46p's D4: asya's AWS_SECRET_ACCESS_KEY was written in plain text); a
// name that is no secret's keeps its value.
func TestImportEnvListCredentialIsASecretVariable(t *testing.T) {
	const key = "lit-aws-9f00e1"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "releases:\n  - name: gw\n    namespace: demo\n    chart: oci://r.example/gw\n    version: 1.0.0\n    values:\n      - gw.yaml.gotmpl\n",
		"gw.yaml.gotmpl":       "env:\n  - name: AWS_REGION\n    value: {{ \"us-east-1\" }}\n  - name: OIDC_TOKEN_URI\n    value: https://id.example/token\n  - name: AWS_SECRET_ACCESS_KEY\n    value: " + key + "\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := everything(res)
	if strings.Contains(all, key) {
		t.Errorf("the credential is written:\n%s", all)
	}
	for _, want := range []string{"value: ${AWS_SECRET_ACCESS_KEY|toJson}", "value: us-east-1", "value: https://id.example/token", "gw.yaml.gotmpl:7: release gw values env.2.value: the helmfile holds it in plain text"} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}
	if v := varNamed(res, "AWS_SECRET_ACCESS_KEY"); v == nil || !v.Secret || !v.Required {
		t.Errorf("AWS_SECRET_ACCESS_KEY is %+v, want a required secret", v)
	}
}
