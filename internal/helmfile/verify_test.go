package helmfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/test/chartsrc"
)

// pubring copies a real OpenPGP public keyring to path.
func pubring(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(chartsrc.NewSigner(t, "Chart Signer").PublicRing)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// verify: true and keyring: (a release's, else helmDefaults') are helm's
// --verify --keyring: the step's verify.provenance.keyring; where helm
// cannot verify (a chart folder) or the keyring is the machine's, the
// release is partial at its line.
func TestImportVerifyKeyring(t *testing.T) {
	dir := t.TempDir()
	pubring(t, filepath.Join(dir, "keys", "pubring.gpg"))
	write(t, dir, map[string]string{
		"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"helmfile.yaml": `repositories:
  - name: r
    url: https://charts.example.com
helmDefaults:
  verify: true
  keyring: ./keys/pubring.gpg
releases:
  - name: signed
    namespace: a
    chart: r/signed
    version: 1.0.0
  - name: unsigned
    namespace: a
    chart: r/unsigned
    version: 1.0.0
    verify: false
  - name: folder
    namespace: a
    chart: ./chart
  - name: missing
    namespace: a
    chart: r/missing
    version: 1.0.0
    keyring: ./keys/other.gpg
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	if want := "chart: signed\n      repo: https://charts.example.com\n      version: 1.0.0\n      verify:\n        provenance:\n          keyring: ./keys/pubring.gpg\n"; !strings.Contains(spec, want) {
		t.Errorf("no %q in:\n%s", want, spec)
	}
	if n := strings.Count(spec, "      verify:\n"); n != 1 {
		t.Errorf("%d steps verify, want 1:\n%s", n, spec)
	}
	why := map[string]string{}
	for _, r := range res.Releases {
		for _, n := range r.NotCarried {
			why[r.Resolved.Name] += n.String()
		}
	}
	for rel, want := range map[string]string{
		"folder":  "helm verifies only a packaged chart",
		"missing": "helmfile.yaml:24: release missing: verify: the keyring ./keys/other.gpg is not there at import",
	} {
		if !strings.Contains(why[rel], want) {
			t.Errorf("release %s: not carried %q, want %q", rel, why[rel], want)
		}
	}
	if why["signed"]+why["unsigned"] != "" {
		t.Errorf("not carried: %v", why)
	}
}
