package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/cli/iostreams"
)

// Bad input for khook import script: a script bash cannot parse, a
// sourced file that is missing, a binary file. Each is one sentence at
// FILE:LINE, exit 2, and nothing is written (no spec, no file beside it).
func TestImportScriptBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"unparseable", map[string]string{"install.sh": "#!/bin/bash\nhelm repo add a https://a.example\nif [ -n \"$X\" ]; then\n  kubectl apply -f a.yaml\n"},
			"Error: install.sh:3: bash cannot parse it: `if` statement must end with `fi`; nothing written\n"},
		{"missing sourced file", map[string]string{"install.sh": "#!/bin/bash\nset -e\nsource ./lib/common.sh\nkubectl apply -f a.yaml\n"},
			"Error: install.sh:3: it sources lib/common.sh, which cannot be read (no such file or directory); run the import from where the script runs (--dir); nothing written\n"},
		{"missing file a sourced file sources", map[string]string{"install.sh": "#!/bin/bash\n. lib/a.sh\n", "lib/a.sh": "kubectl get nodes\n\nsource lib/b.sh\n"},
			"Error: lib/a.sh:3: it sources lib/b.sh, which cannot be read (no such file or directory); run the import from where the script runs (--dir); nothing written\n"},
		{"binary", map[string]string{"install.sh": "\x7fELF\x02\x01\x01\x00\x00\x00kubectl apply"},
			"Error: install.sh:1: it is a binary file, not a shell script; nothing written\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			writeTree(t, tc.files)
			if err := os.Mkdir("out", 0o755); err != nil {
				t.Fatal(err)
			}
			ios, out, errOut := iostreams.Test("")
			code := Run(context.Background(), []string{"import", "script", "--out", "out/khook.yaml", "install.sh"}, ios)
			if code != 2 || errOut.String() != tc.want || out.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and %q", code, errOut, out, tc.want)
			}
			if strings.Count(strings.TrimSuffix(errOut.String(), "\n"), "\n") > 0 {
				t.Errorf("more than one line: %q", errOut)
			}
			if written, _ := os.ReadDir("out"); len(written) > 0 {
				t.Errorf("%s written for bad input", written[0].Name())
			}
		})
	}
}

// The script's arguments are its own, also those starting with - (#46):
// khook's flags end at FILE, so `-n prod` reaches the script's option
// loop without "--"; "--" right after FILE (the old form) and before it
// still work; --out after FILE is the script's and said so.
func TestImportScriptArgsWithDashes(t *testing.T) {
	script := "#!/bin/bash\nset -e\nwhile [[ $# -gt 0 ]]; do\n  case $1 in\n    -n) NS=$2; shift 2;;\n    *) shift;;\n  esac\ndone\nkubectl create namespace \"$NS\"\n"
	for _, tc := range []struct {
		name string
		args []string
		warn string
	}{
		{"after FILE", []string{"--out", "khook.yaml", "install.sh", "-n", "prod"}, ""},
		{"-- after FILE", []string{"--out", "khook.yaml", "install.sh", "--", "-n", "prod"}, ""},
		{"-- before FILE", []string{"--out", "khook.yaml", "--", "install.sh", "-n", "prod"}, ""},
		{"khook's flag after FILE", []string{"install.sh", "-n", "prod", "--out", "khook.yaml"}, "warning: --out after install.sh is an argument of the script, not khook's flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			if err := os.WriteFile("install.sh", []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			ios, out, errOut := iostreams.Test("")
			code := Run(context.Background(), append([]string{"import", "script"}, tc.args...), ios)
			spec := out.String()
			if b, err := os.ReadFile("khook.yaml"); err == nil {
				spec = string(b)
			}
			if code != 0 || !strings.Contains(spec, "name: prod") {
				t.Fatalf("exit %d, stderr %q, spec:\n%s", code, errOut, spec)
			}
			if tc.warn != "" && !strings.Contains(errOut.String(), tc.warn) || tc.warn == "" && strings.Contains(errOut.String(), "warning") {
				t.Errorf("stderr %q, want warning %q", errOut, tc.warn)
			}
		})
	}
}

// The import runs khook validate's own check on what it writes (#46): a
// local chart or kustomization rendering an API version Kubernetes
// removed is not carried, named at its line with the check's reason; a
// problem only the stand-in value of a required variable causes is said,
// and the step kept. What is written validates with that variable set.
func TestImportScriptRunsValidateCheck(t *testing.T) {
	t.Chdir(t.TempDir())
	writeTree(t, map[string]string{
		"install.sh": "#!/bin/bash\nhelm upgrade --install prometheus ./prometheus -n monitoring\nkubectl apply -k crds\n" +
			"kubectl apply -f \"manifests/${ENV_NAME}.yaml\"\nkubectl apply -f ok.yaml\n",
		"prometheus/Chart.yaml":                 "apiVersion: v2\nname: prometheus\nversion: 0.1.0\n",
		"prometheus/templates/clusterrole.yaml": "apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole\nmetadata:\n  name: prometheus-server\nrules: []\n",
		"crds/kustomization.yaml":               "resources: [crd.yaml]\n",
		"crds/crd.yaml": "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: redis.k8s.example.com\n" +
			"spec:\n  group: k8s.example.com\n  names: {kind: Redis, plural: redis}\n  scope: Namespaced\n  version: v1alpha1\n",
		"manifests/dev.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dev\n",
		"ok.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
	})
	ios, _, errOut := iostreams.Test("")
	if code := Run(context.Background(), []string{"import", "script", "--out", "khook.yaml", "install.sh"}, ios); code != 1 {
		t.Fatalf("import: exit %d, want 1\n%s", code, errOut)
	}
	for _, want := range []string{
		"install.sh:2: not carried over: helm upgrade --install prometheus ./prometheus -n monitoring: khook validate refuses it: chart ./prometheus renders clusterrole.rbac.authorization.k8s.io/prometheus-server: " +
			"rbac.authorization.k8s.io/v1beta1 ClusterRole was removed in v1.22: use rbac.authorization.k8s.io/v1",
		"(Kubernetes v1.36); the script's own install fails on a current cluster too: update the chart and import again\n",
		"install.sh:3: not carried over: kubectl apply -k crds: khook validate refuses it: kustomization ./crds renders customresourcedefinition.apiextensions.k8s.io/redis.k8s.example.com: apiextensions.k8s.io/v1beta1 CustomResourceDefinition was removed in v1.22",
		"install.sh:4: warning: step apply-env-name: khook validate finds, with stand-in values for ENV_NAME: manifests[0]: cannot read manifest file ./manifests/x.yaml",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	ios, out, errOut := iostreams.Test("")
	if code := Run(context.Background(), []string{"validate", "-f", "khook.yaml", "--set", "ENV_NAME=dev"}, ios); code != 0 {
		t.Errorf("validate: exit %d\n%s%s", code, out, errOut)
	}
}

// kubectl apply -f of a file holding a Deployment of a removed API version
// and a Service: kubectl creates the Service, and so does the spec, with
// khook validate's own check (trial 46s70j's D3).
func TestImportScriptKeepsAFilesAcceptedObjects(t *testing.T) {
	t.Chdir(t.TempDir())
	writeTree(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl apply -f app.yaml\n",
		"app.yaml": "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"})
	ios, _, errOut := iostreams.Test("")
	if code := Run(context.Background(), []string{"import", "script", "--out", "khook.yaml", "install.sh"}, ios); code != 1 ||
		!strings.Contains(errOut.String(), "install.sh:2: not carried over: ./app.yaml: ./app.yaml holds an object of an API version the cluster no longer serves (deployment.extensions/web: extensions/v1beta1 Deployment was removed in v1.16: use apps/v1 (Kubernetes v1.") {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	if b, err := os.ReadFile("khook.yaml"); err != nil || !strings.Contains(string(b), "            kind: Service\n") || strings.Contains(string(b), "Deployment\n") {
		t.Errorf("spec %s %v", b, err)
	}
}

// writeTree writes files (paths relative to the working directory).
func writeTree(t *testing.T, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FILE is named from the working directory, as --out is, while the script
// runs from --dir (trials 46s67a and c: --dir observability
// observability/backend.sh); a FILE named from --dir still works, a missing
// one says where it was looked for; --out's folder is made.
func TestImportScriptFileFromWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTree(t, map[string]string{"obs/backend.sh": "#!/bin/bash\nset -e\nkubectl apply -f m.yaml -n x\n", "obs/m.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	for i, file := range []string{"obs/backend.sh", "backend.sh"} {
		ios, _, errOut := iostreams.Test("")
		out := filepath.Join("out", strings.Repeat("x", i), "khook.yaml")
		if code := Run(context.Background(), []string{"import", "script", "--dir", "obs", "--out", out, file}, ios); code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, errOut)
		}
		spec, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(spec), "# from backend.sh:3\n") || !strings.Contains(string(spec), "obs/m.yaml") {
			t.Errorf("%s: spec:\n%s", file, spec)
		}
	}
	ios, _, errOut := iostreams.Test("")
	if code := Run(context.Background(), []string{"import", "script", "--dir", "obs", "--out", "out/k.yaml", "obs/nope.sh"}, ios); code != 2 ||
		errOut.String() != "Error: obs/nope.sh: cannot read the script: no such file or directory (read from the working directory, and not under --dir obs either); nothing written\n" {
		t.Errorf("missing: exit %d, %q", code, errOut)
	}
}

// TestImportScriptSummaryCountsOtherLines: the summary under not-carried
// lines that are no helm/kubectl command says so (trial 46s69g's D4:
// "0 helm/kubectl commands … 0 not carried" under them).
func TestImportScriptSummaryCountsOtherLines(t *testing.T) {
	t.Chdir(t.TempDir())
	writeTree(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nKUBECTL=$(command -v kubectl)\n$KUBECTL create namespace demo\nTOOL=$(pick)\n$TOOL apply -f x.yaml\n"})
	ios, _, errOut := iostreams.Test("")
	if code := Run(context.Background(), []string{"import", "script", "--out", "khook.yaml", "install.sh"}, ios); code != 1 {
		t.Fatalf("import: exit %d, want 1\n%s", code, errOut)
	}
	if want := "1 helm/kubectl commands: 0 steps, 0 folded, 0 read-only, 1 not carried; 0 steps written; import refused (1 other line not carried: commands, flags or conditions)\n"; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
}
