package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestGenerateHelmfile checks the platform as a helmfile (#24): every
// object of the inventory is rendered by exactly one release, every release
// it needs exists, and the file is the same for the same prefix.
func TestGenerateHelmfile(t *testing.T) {
	p, err := GeneratePlatform(t.TempDir(), "ph")
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.GenerateHelmfile()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p.Helmfile())
	if err != nil {
		t.Fatal(err)
	}
	var hf struct {
		Releases []struct {
			Name, Namespace, Chart string
			Values                 []string
			Needs                  []string
		}
	}
	if err := yaml.Unmarshal(data, &hf); err != nil {
		t.Fatalf("helmfile.yaml is not YAML: %v\n%s", err, data)
	}
	// namespaces, crds, 30 charts, 20 config and 20 custom-resource releases, the job.
	if want := 2 + platformCharts + 2*platformNamespaces + 1; n != want || len(hf.Releases) != want {
		t.Errorf("generated %d releases (file: %d), want %d", n, len(hf.Releases), want)
	}
	names := map[string]bool{}
	for _, r := range hf.Releases {
		names[r.Namespace+"/"+r.Name] = true
	}
	inventory := map[Object]bool{}
	for _, o := range p.Objects {
		inventory[o] = true
	}
	rendered := map[Object]int{}
	for _, r := range hf.Releases {
		for _, need := range r.Needs {
			if !names[need] {
				t.Errorf("release %s needs %s, which the helmfile does not have", r.Name, need)
			}
		}
		var values string
		if len(r.Values) > 0 {
			values = filepath.Join(p.Dir, r.Values[0])
		}
		for _, o := range renderChartDir(t, filepath.Join(p.Dir, r.Chart), values, r.Name, r.Namespace) {
			if o.Kind == "Namespace" || o.Kind == "CustomResourceDefinition" {
				o.Namespace = ""
			}
			rendered[o]++
			if !inventory[o] {
				t.Errorf("release %s renders %v, which the inventory does not list", r.Name, o)
			}
		}
	}
	for _, o := range p.Objects {
		if rendered[o] != 1 {
			t.Errorf("%v is rendered by %d releases, want 1", o, rendered[o])
		}
	}
	job, err := os.ReadFile(filepath.Join(p.Dir, "helmfile-charts", "bootstrap", "templates", "job.yaml"))
	if err != nil || !strings.Contains(string(job), "helm.sh/hook: post-install,post-upgrade") {
		t.Errorf("the job is not a Helm hook (%v):\n%s", err, job)
	}

	again, err := GeneratePlatform(t.TempDir(), "ph")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.GenerateHelmfile(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tree(t, p.Dir), tree(t, again.Dir)); diff != "" {
		t.Errorf("two generations differ (-first +second):\n%s", diff)
	}
}

// TestBenchToolPins: `make bench-tools` and build-helm-diff.sh build the
// versions the benchmark looks for (a mismatch would skip the arm), and the
// helm CLI test/helmcli builds is go.mod's Helm, the script's HelmVersion.
func TestBenchToolPins(t *testing.T) {
	for file, pins := range map[string][]string{
		"../../Makefile":           {"HELMFILE_VERSION := " + HelmfileVersion},
		"../../go.mod":             {"\thelm.sh/helm/v4 " + HelmVersion + "\n"},
		"tools/build-helm-diff.sh": {"HELM_DIFF_VERSION=" + HelmDiffVersion + "\n"},
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, pin := range pins {
			if !strings.Contains(string(data), pin) {
				t.Errorf("%s does not pin %q, which test/bench reads", file, strings.TrimSpace(pin))
			}
		}
	}
}
