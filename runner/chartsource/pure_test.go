package chartsource

import "testing"

func TestSplitOCIRef(t *testing.T) {
	for ref, want := range map[string][3]string{
		"127.0.0.1:5000/charts/demo":                 {"127.0.0.1:5000/charts/demo", "", ""},
		"127.0.0.1:5000/charts/demo:1.2.3":           {"127.0.0.1:5000/charts/demo", "1.2.3", ""},
		"ghcr.io/org/demo@sha256:abc":                {"ghcr.io/org/demo", "", "sha256:abc"},
		"ghcr.io/org/demo:1.0.0@sha256:abc":          {"ghcr.io/org/demo", "1.0.0", "sha256:abc"},
		"registry.example:443/a/b/c/demo:0.1.0-rc.1": {"registry.example:443/a/b/c/demo", "0.1.0-rc.1", ""},
	} {
		b, tag, d := splitOCIRef(ref)
		if [3]string{b, tag, d} != want {
			t.Errorf("splitOCIRef(%q) = %q %q %q, want %q", ref, b, tag, d, want)
		}
	}
}

func TestSplitCredentialsRegistersPassword(t *testing.T) {
	e := New(nil, ".", nil, Options{})
	clean, user, pass, err := e.splitCredentials("https://bob:p%40ss@charts.example/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if clean != "https://charts.example/x" || user != "bob" || pass != "p@ss" {
		t.Errorf("got %q %q %q", clean, user, pass)
	}
	if got := e.redactor.String("token p@ss here"); got != "token *** here" {
		t.Errorf("password not registered with the redactor: %q", got)
	}
}
