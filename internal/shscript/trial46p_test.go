package shscript

import "testing"

// --set of the name of a key of a Secret (tls.crt, secretKey beside
// secretName) or of a boolean is no credential; a password still is (the
// rule of trial 46p's D2, shared with the helmfile import).
func TestSetKeyNamesAreNoCredentials(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "install.sh", `#!/bin/sh
helm repo add bitnami https://charts.bitnami.com/bitnami
helm upgrade --install gw bitnami/gw --set tls.certSecretKey=tls.crt,auth.plainTextPassword=false --set gw.secretName=s,gw.secretKey=secret --set auth.password=lit-pw-7071
`)
	res, err := Import("install.sh", Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"TLS_CERTSECRETKEY", "AUTH_PLAINTEXTPASSWORD", "GW_SECRETKEY"} {
		if d := res.Model.Var(v); d != nil {
			t.Errorf("variable %s: %+v, want none", v, d)
		}
	}
	if d := res.Model.Var("AUTH_PASSWORD"); d == nil || !d.Secret || !d.Required {
		t.Errorf("AUTH_PASSWORD: %+v, want a required secret", d)
	}
}
