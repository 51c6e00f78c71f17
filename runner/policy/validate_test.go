package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

// Each policy or binding of testdata/refused is one the API server
// refuses on create (test/e2e's TestVAPRefusedAsServer asks the test
// control plane): khook refuses it too, at the line of each field the
// file marks `# want: FIELD`, in the server's words on one line.
func TestServerValidationRefuses(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "refused", "*.yaml"))
	if err != nil || len(files) < 8 {
		t.Fatalf("%d cases in testdata/refused (%v), want at least 8", len(files), err)
	}
	specFile := filepath.Join(t.TempDir(), "khook.yaml")
	if err := os.WriteFile(specFile, []byte(minimalSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			s, err := spec.Load(spec.LoadOptions{Files: []string{specFile}, Policies: []string{file}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = New(s)
			var probs spec.Problems
			if !errors.As(err, &probs) {
				t.Fatalf("New = %v, want the API server's refusals", err)
			}
			for _, p := range probs {
				if strings.Contains(p.String(), "\n") || !strings.Contains(p.Message, "the API server refuses it: ") {
					t.Errorf("problem %q, want one line with the API server's refusal", p.String())
				}
			}
			for line, field := range wantedFields(t, file) {
				if !refusedAt(probs, line, field) {
					t.Errorf("no refusal of %s at line %d; problems:\n%s", field, line, probs.Error())
				}
			}
		})
	}
}

// wantedFields are the lines of file marked `# want: FIELD`.
func wantedFields(t *testing.T, file string) map[int]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{}
	for i, l := range strings.Split(string(data), "\n") {
		if _, field, ok := strings.Cut(l, "# want: "); ok {
			want[i+1] = strings.TrimSpace(field)
		}
	}
	if len(want) == 0 {
		t.Fatalf("%s marks no line `# want: FIELD`", file)
	}
	return want
}

func refusedAt(probs spec.Problems, line int, field string) bool {
	for _, p := range probs {
		if p.Pos.Line == line && strings.Contains(p.Message, "refuses it: "+field+": ") {
			return true
		}
	}
	return false
}

// A field path as the server writes it is found at the line the document
// writes it, a field it lacks at its nearest parent's.
func TestFieldPos(t *testing.T) {
	d := spec.AdmissionDoc{File: "p.yaml", Line: 1, Positions: map[string]spec.Pos{
		"":                                  {File: "p.yaml", Line: 1},
		"spec":                              {File: "p.yaml", Line: 5},
		"spec.paramRef":                     {File: "p.yaml", Line: 9},
		"spec.validations.1.expression":     {File: "p.yaml", Line: 12},
		"metadata.labels.app.kubernetes.io": {File: "p.yaml", Line: 3},
	}}
	for path, line := range map[string]int{
		"spec.validations[1].expression":        12,
		"spec.paramRef.parameterNotFoundAction": 9,
		"spec.auditAnnotations":                 5,
		"metadata.labels[app.kubernetes.io]":    3,
		"<nil>":                                 1,
	} {
		if got := fieldPos(d, path).Line; got != line {
			t.Errorf("fieldPos(%q) at line %d, want %d", path, got, line)
		}
	}
}

// A name the API server reserves for its own manifests is a note, not a
// refusal: whether the cluster refuses it is its feature gate's to say.
func TestStaticSuffixIsANote(t *testing.T) {
	_, set, err := loadPolicies(t, policyDoc("p.static.k8s.io", deployRules+"\n  validations: [{expression: 'true'}]", "  validationActions: [Deny]"))
	if err != nil {
		t.Fatal(err)
	}
	if notes := set.PlanNotes(); len(notes) != 1 || !strings.Contains(notes[0], "ValidatingAdmissionPolicy p.static.k8s.io: metadata.name: names ending with \".static.k8s.io\" are reserved") {
		t.Errorf("notes %q, want the server's warning naming the policy", notes)
	}
}
