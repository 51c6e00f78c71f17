package spec

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/redact"
)

var update = flag.Bool("update", false, "rewrite golden files (testdata/*.golden, docs/schema)")

// testEnviron is the environment every testdata spec is loaded with.
var testEnviron = []string{
	"KHOOK_VAR_ENV=prod",
	"KHOOK_VAR_REGION=eu-west-1",
	"KHOOK_SECRET_TOKEN=s3cr3t",
	"HOME=/root",
}

func loadTestdata(t *testing.T, file string) (*Spec, error) {
	t.Helper()
	return Load(LoadOptions{Files: []string{file}, Environ: testEnviron, Redactor: redact.New()})
}

func TestValidSpecs(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid-*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata/valid-*.yaml")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := loadTestdata(t, f)
			if err != nil {
				t.Fatalf("want a valid spec, got:\n%v", err)
			}
			if len(s.Steps) == 0 {
				t.Fatal("no steps loaded")
			}
		})
	}
}

// TestInvalidSpecs compares every problem, with its position, to the
// sibling .golden file (go test ./spec -run TestInvalidSpecs -update).
func TestInvalidSpecs(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid-*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata/invalid-*.yaml")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := loadTestdata(t, f)
			var probs Problems
			if !errors.As(err, &probs) {
				t.Fatalf("want Problems, got %T: %v", err, err)
			}
			for _, p := range probs {
				if p.Pos.File != f || p.Pos.Line == 0 || p.Pos.Col == 0 {
					t.Errorf("problem without a full file:line:col: %s", p)
				}
			}
			got := probs.Error() + "\n"
			golden := strings.TrimSuffix(f, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
				t.Errorf("problems differ from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}
