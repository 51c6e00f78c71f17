package spec

import (
	"strings"
	"testing"
	"time"
)

func loadHelmStep(t *testing.T, extra string) (*Helm, error) {
	t.Helper()
	text := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: t}\nsteps:\n- name: app\n  helm:\n    chart: ./chart\n" + extra
	s, err := Load(LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(text)})
	if err != nil {
		return nil, err
	}
	return s.Steps[0].Helm, nil
}

func TestHelmTestShapes(t *testing.T) {
	for in, want := range map[string]*HelmTest{
		"":                  nil,
		"    test: false\n": nil,
		"    test: true\n":  {},
		"    test: {timeout: 2m, filter: [a, '!b'], always: true}\n": {Timeout: Duration(2 * time.Minute), Filter: []string{"a", "!b"}, Always: true},
	} {
		h, err := loadHelmStep(t, in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if (h.Test == nil) != (want == nil) || (want != nil && (h.Test.Timeout != want.Timeout || h.Test.Always != want.Always || strings.Join(h.Test.Filter, ",") != strings.Join(want.Filter, ","))) {
			t.Errorf("%q: test = %+v, want %+v", in, h.Test, want)
		}
	}
	if _, err := loadHelmStep(t, "    test: yes please\n"); err == nil {
		t.Error("test: a string was accepted")
	}
}

func TestPostRenderersValidated(t *testing.T) {
	h, err := loadHelmStep(t, `    postRenderers:
    - kustomize:
        patches:
        - target: {kind: Deployment, name: web}
          patch: |
            - op: replace
              path: /spec/replicas
              value: 3
        images:
        - {name: nginx, newTag: "1.27"}
`)
	if err != nil {
		t.Fatal(err)
	}
	if k := h.PostRenderers[0].Kustomize; k.Patches[0].Target.Kind != "Deployment" || k.Images[0].NewTag != "1.27" {
		t.Errorf("decoded %+v", k)
	}
	_, err = loadHelmStep(t, "    postRenderers:\n    - kustomize:\n        images:\n        - {name: nginx}\n")
	if err == nil || !strings.Contains(err.Error(), "changes nothing") {
		t.Errorf("an image override that changes nothing: %v", err)
	}
}
