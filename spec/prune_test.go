package spec

import (
	"strings"
	"testing"
)

func loadPrune(t *testing.T, top, step string) (*Spec, error) {
	t.Helper()
	text := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: t}\n" + top +
		"steps:\n- name: app\n  apply:\n    manifests: [{inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}'}]\n" + step +
		"- name: wait\n  wait: {for: ready, on: deployment/web}\n"
	return Load(LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(text)})
}

func TestPruneShapes(t *testing.T) {
	for _, c := range []struct {
		top, step string
		want      Prune
	}{
		{"", "", Prune{}},
		{"prune: false\n", "", Prune{Disabled: true}},
		{"prune: {crds: true}\n", "", Prune{CRDs: true}},
		{"prune: {crds: true}\n", "  prune: {namespaces: true}\n", Prune{Namespaces: true}},
		{"prune: false\n", "  prune: {namespaces: true}\n", Prune{Disabled: true, Namespaces: true}},
		{"", "  prune: false\n", Prune{Disabled: true}},
		{"", "  prune: true\n", Prune{}},
	} {
		s, err := loadPrune(t, c.top, c.step)
		if err != nil {
			t.Fatalf("%q %q: %v", c.top, c.step, err)
		}
		if got := s.PruneOf(s.Steps[0]); got != c.want {
			t.Errorf("%q %q: PruneOf = %+v, want %+v", c.top, c.step, got, c.want)
		}
	}
}

// Every problem of prune: is reported at once, at its line.
func TestPruneValidated(t *testing.T) {
	text := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: t}\nprune: {crd: true}\n" +
		"steps:\n- name: app\n  apply:\n    manifests: [{inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}'}]\n  prune: yes please\n" +
		"- name: wait\n  prune: false\n  wait: {for: ready, on: deployment/web}\n"
	_, err := Load(LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(text)})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"<stdin>:4:", "crd", "<stdin>:9:10: steps.0.prune: must be true, false or {crds, namespaces, data}", "<stdin>:11:", "prune: applies to helm and apply steps, not to a wait step"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}
