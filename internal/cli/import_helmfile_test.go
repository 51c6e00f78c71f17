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

// helmfileSnapshots is what the importer makes of the inputs below. Update
// it when the importer learns (or stops) carrying something over.
var helmfileSnapshots = map[string]int{"faithful": 6, "partial": 7, "refused": 10}

// refusedAt is how the importer refuses a helmfile: FILE:LINE and why.
var refusedAt = regexp.MustCompile(`^(Error: )?helmfile\.yaml(\.gotmpl)?:([0-9]+)(:[0-9]+)?: \S.*`)

// Every helmfile of helmfile's own e2e snapshot tests (vendored, see
// test/testdata/helmfile-snapshots/SOURCES.md) and the project's own either
// imports to a spec that `khook validate` accepts as written, header
// comment and unconverted templates included, or is refused with FILE:LINE
// and why.
func TestImportHelmfileSnapshotsValidate(t *testing.T) {
	inputs, err := filepath.Glob("../../test/testdata/helmfile-snapshots/*.yaml*")
	if err != nil || len(inputs) < 20 {
		t.Fatalf("helmfile snapshot inputs: %d (%v), want at least 20", len(inputs), err)
	}
	inputs = append(inputs, "../../test/e2e/testdata/helmfile/helmfile.yaml")
	counts := map[string]int{}
	for _, in := range inputs {
		t.Run(strings.TrimSuffix(filepath.Base(in), filepath.Ext(in)), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			// The project's helmfile has placeholders test/e2e fills in.
			data = []byte(strings.NewReplacer("HTTP_REPO_URL", "https://charts.example", "OCI_HOST", "registry.example", "NS", "apps").Replace(string(data)))
			dir := t.TempDir()
			name := "helmfile.yaml"
			if strings.HasSuffix(in, ".gotmpl") {
				name += ".gotmpl" // helmfile renders only .gotmpl files
			}
			hf, spec := filepath.Join(dir, name), filepath.Join(dir, "khook.yaml")
			if err := os.WriteFile(hf, data, 0o644); err != nil {
				t.Fatal(err)
			}
			// The project's helmfile comes with the files it reads.
			for _, f := range []string{"values/cert-manager.yaml", "values/app.yaml", "values/monitoring.yaml.gotmpl", "env/default.yaml", "secrets/app.yaml"} {
				if b, err := os.ReadFile(filepath.Join(filepath.Dir(in), f)); err == nil {
					_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
					_ = os.WriteFile(filepath.Join(dir, f), b, 0o644)
				}
			}
			t.Chdir(dir) // messages name helmfile.yaml as the user would
			ios, _, errOut := iostreams.Test("")
			code := Run(context.Background(), []string{"import", "helmfile", name, "--out", "khook.yaml"}, ios)
			_, written := os.Stat(spec)
			switch {
			case code == 0:
				counts["faithful"]++
			case code == 1 && written == nil:
				// Partial: the spec is written, each thing not carried at its line.
				counts["partial"]++
				if msg := strings.TrimSpace(errOut.String()); !refusedAt.MatchString(msg) || !strings.Contains(msg, "import partial") {
					t.Errorf("partial import without FILE:LINE and a verdict (exit %d): %s", code, msg)
				}
			default:
				counts["refused"]++
				if written == nil {
					t.Errorf("exit %d, yet a spec was written", code)
				}
				msg := strings.TrimSpace(errOut.String())
				m := refusedAt.FindStringSubmatch(lastLine(msg))
				if m == nil {
					t.Errorf("import refused without FILE:LINE and why (exit %d): %s", code, msg)
					return
				}
				// The line named is a real line of the input, not a blank or a comment.
				lines := strings.Split(string(data), "\n")
				if n, _ := strconv.Atoi(m[3]); n < 1 || n > len(lines) {
					t.Errorf("import refused at line %d of a %d-line helmfile: %s", n, len(lines), msg)
				} else if l := strings.TrimSpace(lines[n-1]); l == "" || strings.HasPrefix(l, "#") {
					t.Errorf("import refused at line %d, which is %q: %s", n, l, msg)
				}
				t.Logf("refused: %s", lastLine(errOut.String()))
				return
			}
			ios, out, errOut := iostreams.Test("")
			if code := Run(context.Background(), []string{"validate", "-f", spec}, ios); code != 0 {
				written, _ := os.ReadFile(spec)
				t.Errorf("validate of the imported spec: exit %d\n%s%s\nspec:\n%s", code, out, errOut, written)
			}
		})
	}
	t.Logf("of %d helmfiles: %d faithful, %d partial (written, exit 1), %d refused at a line", len(inputs), counts["faithful"], counts["partial"], counts["refused"])
	for k, want := range helmfileSnapshots {
		if counts[k] != want {
			t.Errorf("%d helmfiles %s, want %d (helmfileSnapshots)", counts[k], k, want)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Bad input: one sentence at FILE:LINE, exit 2, nothing written.
func TestImportHelmfileBadInput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("helmfile.yaml.gotmpl", []byte("releases:\n  - name: a\n    chart: ./a\n    values: [missing.yaml]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, out, errOut := iostreams.Test("")
	code := Run(context.Background(), []string{"import", "helmfile", "helmfile.yaml.gotmpl", "--out", "khook.yaml"}, ios)
	want := "Error: helmfile.yaml.gotmpl:4: release a: the values file missing.yaml cannot be read: no such file or directory; nothing written\n"
	if code != 2 || errOut.String() != want || out.Len() != 0 {
		t.Errorf("exit %d, stderr %q, stdout %q; want 2 and %q", code, errOut, out, want)
	}
	if _, err := os.Stat("khook.yaml"); err == nil {
		t.Error("a spec was written for bad input")
	}
}

// -e for an environment the helmfile does not define is bad input (exit 2,
// nothing written), as helmfile refuses it; a defined one imports, and the
// count line says "1 release".
func TestImportHelmfileEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTree(t, map[string]string{
		"helmfile.yaml": "environments:\n  dev: {}\n  prod: {}\n---\nreleases:\n  - name: a\n    chart: ./a\n",
		"a/Chart.yaml":  "apiVersion: v2\nname: a\nversion: 0.1.0\n",
	})
	ios, out, errOut := iostreams.Test("")
	code := Run(context.Background(), []string{"import", "helmfile", "-e", "prd", "helmfile.yaml", "--out", "khook.yaml"}, ios)
	want := "Error: helmfile.yaml: environment \"prd\" is not defined (helmfile refuses it too): this helmfile defines only dev and prod: choose one with --environment NAME (-e NAME); nothing written\n"
	if code != 2 || errOut.String() != want || out.Len() != 0 {
		t.Errorf("exit %d, stderr %q, stdout %q; want 2 and %q", code, errOut, out, want)
	}
	if _, err := os.Stat("khook.yaml"); err == nil {
		t.Error("a spec was written for an undefined environment")
	}

	ios, _, errOut = iostreams.Test("")
	code = Run(context.Background(), []string{"import", "helmfile", "-e", "prod", "helmfile.yaml", "--out", "khook.yaml"}, ios)
	if want := "1 release: 1 faithful, 0 partial, 0 refused; import faithful"; code != 0 || lastLine(errOut.String()) != want {
		t.Errorf("exit %d, stderr %q; want 0 and %q", code, errOut, want)
	}

	// Without -e, HELMFILE_ENVIRONMENT chooses, as in helmfile, and stderr
	// says so before the count; -e wins over it (trial 46m's D1).
	for _, tc := range []struct {
		variable string
		args     []string
		want     string
	}{
		{"dev", nil, "environment dev (from HELMFILE_ENVIRONMENT; --environment overrides it)"},
		{"dev", []string{"-e", "prod"}, "environment prod (from --environment)"},
		{"", nil, "environment default (neither --environment nor HELMFILE_ENVIRONMENT is set)"},
	} {
		t.Setenv("HELMFILE_ENVIRONMENT", tc.variable)
		ios, _, errOut = iostreams.Test("")
		code = Run(context.Background(), append([]string{"import", "helmfile", "helmfile.yaml", "--out", "khook.yaml"}, tc.args...), ios)
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		if code != 0 || len(lines) < 2 || lines[len(lines)-2] != tc.want || !strings.HasPrefix(lines[len(lines)-1], "1 release: 1 faithful") {
			t.Errorf("HELMFILE_ENVIRONMENT=%s %v: exit %d, stderr %q; want 0 and %q before the count", tc.variable, tc.args, code, errOut, tc.want)
		}
	}
}

// In a helmfile.d folder, a file that does not define -e's environment is
// skipped, as helmfile skips it: stderr says which file and why.
func TestImportHelmfileDEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTree(t, map[string]string{
		"helmfile.d/00-crds.yaml": "releases:\n  - name: crds\n    namespace: infra\n    chart: ../a\n",
		"helmfile.d/01-apps.yaml": "environments:\n  dev: {}\n  prod: {}\n---\nreleases:\n  - name: a\n    namespace: apps\n    chart: ../a\n",
		"a/Chart.yaml":            "apiVersion: v2\nname: a\nversion: 0.1.0\n",
	})
	ios, _, errOut := iostreams.Test("")
	code := Run(context.Background(), []string{"import", "helmfile", "-e", "prod", ".", "--out", "khook.yaml"}, ios)
	want := "helmfile.d/00-crds.yaml: warning: environment \"prod\" is not defined in this file: helmfile skips a helmfile.d file without it, so none of its releases is imported\n" +
		"environment prod (from --environment)\n" +
		"1 release: 1 faithful, 0 partial, 0 refused; import faithful\n"
	if code != 0 || errOut.String() != want {
		t.Errorf("exit %d, stderr %q; want 0 and %q", code, errOut, want)
	}
}

// The helmfile import runs khook validate's own check on what it writes,
// as the script import does (#46): a release whose local chart renders an
// API version Kubernetes removed is refused with the check's reason, and
// the spec written validates.
func TestImportHelmfileRunsValidateCheck(t *testing.T) {
	t.Chdir(t.TempDir())
	writeTree(t, map[string]string{
		"helmfile.yaml":                         "releases:\n- name: prometheus\n  namespace: monitoring\n  chart: ./prometheus\n- name: ok\n  namespace: apps\n  chart: ./ok\n",
		"prometheus/Chart.yaml":                 "apiVersion: v2\nname: prometheus\nversion: 0.1.0\n",
		"prometheus/templates/clusterrole.yaml": "apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole\nmetadata:\n  name: prometheus-server\nrules: []\n",
		"ok/Chart.yaml":                         "apiVersion: v2\nname: ok\nversion: 0.1.0\n",
		"ok/templates/cm.yaml":                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
	})
	ios, _, errOut := iostreams.Test("")
	if code := Run(context.Background(), []string{"import", "helmfile", "--out", "khook.yaml", "helmfile.yaml"}, ios); code != 1 {
		t.Fatalf("import: exit %d, want 1\n%s", code, errOut)
	}
	want := "helmfile.yaml:2: not carried over: release prometheus: khook validate refuses it: chart ./prometheus renders clusterrole.rbac.authorization.k8s.io/prometheus-server: rbac.authorization.k8s.io/v1beta1 ClusterRole was removed in v1.22"
	if !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "the helmfile's own install fails on a current cluster too: update the chart and import again") {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	ios, out, errOut := iostreams.Test("")
	if code := Run(context.Background(), []string{"validate", "-f", "khook.yaml"}, ios); code != 0 || !strings.Contains(out.String(), "valid (1 step)") {
		t.Errorf("validate: exit %d\n%s%s", code, out, errOut)
	}
}
