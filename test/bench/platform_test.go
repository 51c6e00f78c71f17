package bench

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/spec"
)

// TestGeneratePlatform checks the platform workload's shape (issue #14: 200
// steps, 30 local charts, about 2,000 objects in 20 namespaces), that the
// spec is valid, that the charts render the objects the inventory lists, and
// that the same prefix gives the same bytes.
func TestGeneratePlatform(t *testing.T) {
	p, err := GeneratePlatform(t.TempDir(), "pk")
	if err != nil {
		t.Fatal(err)
	}
	if p.Steps != 200 || len(p.Charts) != 30 || len(p.Namespaces) != 20 {
		t.Errorf("generated %d steps, %d charts, %d namespaces; want 200, 30, 20", p.Steps, len(p.Charts), len(p.Namespaces))
	}
	if n := len(p.Objects); n < 1900 || n > 2100 {
		t.Errorf("generated %d objects, want about 2,000", n)
	}
	seen := map[Object]bool{}
	for _, o := range p.Objects {
		if seen[o] {
			t.Errorf("object %v is generated twice", o)
		}
		seen[o] = true
	}
	t.Logf("%d steps, %d charts, %d objects in %d namespaces, %d (kind, namespace) pairs", p.Steps, len(p.Charts), len(p.Objects), len(p.Namespaces), p.KindNamespaces())

	s, err := spec.Load(spec.LoadOptions{Files: []string{p.Spec()}})
	if err != nil {
		t.Fatalf("the generated spec does not load: %v", err)
	}
	if len(s.Steps) != p.Steps {
		t.Errorf("the spec has %d steps, the generator counted %d", len(s.Steps), p.Steps)
	}

	if out, err := exec.Command("bash", "-n", p.Script()).CombinedOutput(); err != nil {
		t.Errorf("bash -n %s: %v\n%s", p.Script(), err, out)
	}
	script, err := os.ReadFile(p.Script())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(script), `"$HELM" upgrade --install`); n != len(p.Charts) {
		t.Errorf("the script installs %d charts, want %d", n, len(p.Charts))
	}

	rendered := map[Object]bool{}
	for i, name := range p.Charts {
		for _, o := range renderChart(t, p, name, p.ns(i)) {
			rendered[o] = true
			if !seen[o] {
				t.Errorf("chart %s renders %v, which the inventory does not list", name, o)
			}
		}
	}
	for _, o := range p.Objects {
		if strings.HasPrefix(o.Name, "app-") && !rendered[o] {
			t.Errorf("the inventory lists %v, which no chart renders", o)
		}
	}

	again, err := GeneratePlatform(t.TempDir(), "pk")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tree(t, p.Dir), tree(t, again.Dir)); diff != "" {
		t.Errorf("two generations differ (-first +second):\n%s", diff)
	}
}

// renderChart renders a generated chart with its values file, as helm
// install would, and returns its objects.
func renderChart(t *testing.T, p *Platform, name, ns string) []Object {
	t.Helper()
	return renderChartDir(t, filepath.Join(p.Dir, "charts", name), filepath.Join(p.Dir, "values", name+".yaml"), name, ns)
}

// renderChartDir renders the chart in dir as release name in ns, with the
// values file when one is given.
func renderChartDir(t *testing.T, dir, valuesFile, name, ns string) []Object {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	vals := common.Values{}
	if valuesFile != "" {
		if vals, err = common.ReadValuesFile(valuesFile); err != nil {
			t.Fatal(err)
		}
	}
	top, err := chartutil.ToRenderValues(ch, vals, common.ReleaseOptions{Name: name, Namespace: ns, IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		t.Fatalf("chart %s does not render: %v", name, err)
	}
	var objs []Object
	for _, text := range files {
		for _, doc := range strings.Split(text, "\n---\n") {
			var o struct {
				Kind     string
				Metadata struct{ Name string }
			}
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Fatalf("chart %s renders invalid YAML: %v\n%s", name, err, doc)
			}
			if o.Kind != "" {
				objs = append(objs, Object{Kind: o.Kind, Namespace: ns, Name: o.Metadata.Name})
			}
		}
	}
	return objs
}

// tree maps each file under dir to its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
