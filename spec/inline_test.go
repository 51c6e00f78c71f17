package spec

import (
	"bytes"
	"testing"

	"github.com/khook/khook/redact"
)

// An inline manifest written as a literal block maps its lines one for one
// onto the spec's; quoted and folded scalars do not.
func TestInlineManifestPositions(t *testing.T) {
	t.Parallel()
	src := `apiVersion: khook.io/v1
kind: Khook
metadata: {name: t}
steps:
  - name: literal
    apply:
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: ${NAME}}

            data: {k: v}
        - inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: q}\n"
  - name: folded
    needs: [literal]
    delete:
      manifests:
        - inline: >
            apiVersion: v1
            kind: ConfigMap
`
	s, err := Load(LoadOptions{Files: []string{"-"}, Stdin: bytes.NewReader([]byte(src)), Redactor: redact.New(),
		Environ: []string{"KHOOK_VAR_NAME=settings"}})
	if err != nil {
		t.Fatal(err)
	}
	lit := s.Steps[0].Apply.Manifests
	if got := lit[0].At.Pos(4, 7).String(); got != "<stdin>:12:19" {
		t.Errorf("literal block line 4 col 7 at %s, want <stdin>:12:19 (data: ...)", got)
	}
	if got := lit[0].At.Pos(3, 17).String(); got != "<stdin>:11:29" {
		t.Errorf("substituted line at %s, want <stdin>:11:29", got)
	}
	if lit[1].At != nil {
		t.Errorf("a quoted scalar has At %+v, want nil", lit[1].At)
	}
	if at := s.Steps[1].Delete.Manifests[0].At; at != nil {
		t.Errorf("a folded block has At %+v, want nil", at)
	}
}
