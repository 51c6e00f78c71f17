package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/khook/khook/internal/cli/iostreams"
)

// helmfileSnapshots is what the importer makes of the inputs below: how
// many import to a valid spec and how many it refuses at a line. Update it
// when the importer learns (or stops) converting something.
var helmfileSnapshots = struct{ imported, refused int }{imported: 14, refused: 9}

// refusedAt is how the importer refuses a helmfile: FILE:LINE and why.
var refusedAt = regexp.MustCompile(`^(Error: )?helmfile\.yaml:([0-9]+)(:[0-9]+)?: \S.*`)

// Every helmfile of helmfile's own e2e snapshot tests (vendored, see
// test/testdata/helmfile-snapshots/SOURCES.md) and the project's own either
// imports to a spec that `khook validate` accepts as written, header
// comment and unconverted templates included, or is refused with FILE:LINE
// and why, the line being one of the file's own (not blank, not a comment).
// The counts are held to helmfileSnapshots, so a test where every input is
// refused does not pass.
func TestImportHelmfileSnapshotsValidate(t *testing.T) {
	inputs, err := filepath.Glob("../../test/testdata/helmfile-snapshots/*.yaml*")
	if err != nil || len(inputs) < 20 {
		t.Fatalf("helmfile snapshot inputs: %d (%v), want at least 20", len(inputs), err)
	}
	inputs = append(inputs, "../../test/e2e/testdata/helmfile/helmfile.yaml")
	imported, refused := 0, 0
	for _, in := range inputs {
		t.Run(strings.TrimSuffix(filepath.Base(in), filepath.Ext(in)), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			// The project's helmfile has placeholders test/e2e fills in.
			data = []byte(strings.NewReplacer("HTTP_REPO_URL", "https://charts.example", "OCI_HOST", "registry.example", "NS", "apps").Replace(string(data)))
			dir := t.TempDir()
			hf, spec := filepath.Join(dir, "helmfile.yaml"), filepath.Join(dir, "khook.yaml")
			if err := os.WriteFile(hf, data, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir) // messages name helmfile.yaml as the user would
			ios, _, errOut := iostreams.Test("")
			if code := Run(context.Background(), []string{"import", "helmfile", "helmfile.yaml", "--out", "khook.yaml"}, ios); code != 0 {
				refused++
				msg := strings.TrimSpace(errOut.String())
				m := refusedAt.FindStringSubmatch(msg)
				if m == nil {
					t.Errorf("import refused without FILE:LINE and why (exit %d): %s", code, msg)
					return
				}
				lines := strings.Split(string(data), "\n")
				n, _ := strconv.Atoi(m[2])
				if n < 1 || n > len(lines) {
					t.Errorf("import refused at line %d of a %d-line helmfile: %s", n, len(lines), msg)
				} else if l := strings.TrimSpace(lines[n-1]); l == "" || strings.HasPrefix(l, "#") {
					t.Errorf("import refused at line %d, which is %q, not what it refuses: %s", n, lines[n-1], msg)
				}
				t.Logf("refused: %s", lastLine(errOut.String()))
				return
			}
			imported++
			ios, out, errOut := iostreams.Test("")
			if code := Run(context.Background(), []string{"validate", "-f", spec}, ios); code != 0 {
				written, _ := os.ReadFile(spec)
				t.Errorf("validate of the imported spec: exit %d\n%s%s\nspec:\n%s", code, out, errOut, written)
			}
		})
	}
	t.Logf("%d of %d helmfiles imported to a valid spec; the rest refused at a line", imported, len(inputs))
	if imported != helmfileSnapshots.imported || refused != helmfileSnapshots.refused {
		t.Errorf("%d helmfiles imported and %d refused, want %d and %d (helmfileSnapshots)", imported, refused, helmfileSnapshots.imported, helmfileSnapshots.refused)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
