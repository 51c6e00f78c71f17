package helmstep

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

// unvendoredChart writes a chart that depends on demo from repoURL and
// caps from ociURL, with no charts/ and, unless lock is false, a Chart.lock
// (its digest replaced by badDigest when set).
func unvendoredChart(t *testing.T, repoURL, ociURL string, lock bool, badDigest string) string {
	t.Helper()
	dir := t.TempDir()
	deps := []*chartv2.Dependency{
		{Name: "demo", Version: "~0.1.0", Repository: repoURL},
		{Name: "caps", Version: "0.1.0", Repository: ociURL},
	}
	meta := map[string]any{"apiVersion": "v2", "name": "umbrella", "version": "1.0.0", "dependencies": deps}
	write := func(name string, v any) {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Chart.yaml", meta)
	if lock {
		locked := []*chartv2.Dependency{
			{Name: "demo", Version: chartsrc.Version, Repository: repoURL},
			{Name: "caps", Version: chartsrc.Version, Repository: ociURL},
		}
		d, err := chartsource.LockDigest(deps, locked)
		if err != nil {
			t.Fatal(err)
		}
		if badDigest != "" {
			d = badDigest
		}
		write("Chart.lock", map[string]any{"dependencies": locked, "digest": d, "generated": "2026-01-01T00:00:00Z"})
	}
	return dir
}

// An unvendored chart with a Chart.lock installs with its dependencies
// from the HTTP repository and the OCI registry; the converged re-run reads
// them from the cache: no request reaches either server.
func TestDependenciesBuiltFromLock(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	f := newFixture(t)
	repo := chartsrc.NewHTTPRepo(t, chartsrc.Auth{}, "demo")
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{})
	reg.Push(t, "caps")
	dir := unvendoredChart(t, repo.URL, reg.URL(), true, "")
	st := f.step("umb", spec.Helm{Chart: dir, Values: map[string]any{"demo": map[string]any{"replicaCount": 1}}})

	httpBefore, ociBefore := repo.Requests(), reg.Requests()
	out := f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release umb revision 1")
	if repo.Requests() == httpBefore || reg.Requests() == ociBefore {
		t.Errorf("the install made %d HTTP and %d OCI requests", repo.Requests()-httpBefore, reg.Requests()-ociBefore)
	}
	if d := f.configMap("umb-demo"); d["message"] != "hello from demo" {
		t.Errorf("the demo subchart's ConfigMap: %v", d)
	}

	httpBefore, ociBefore = repo.Requests(), reg.Requests()
	f2 := &fixture{t: t, ns: f.ns, clients: f.clients, redactor: f.redactor, exec: New(f.clients, f.baseDir, f.redactor), baseDir: f.baseDir}
	defer f2.exec.Close()
	out = f2.run(st, stepTimeout)
	if out.Detail != "release umb unchanged at revision 1" || out.Writes != 0 {
		t.Errorf("converged re-run = %q with %d writes", out.Detail, out.Writes)
	}
	if n, m := repo.Requests()-httpBefore, reg.Requests()-ociBefore; n != 0 || m != 0 {
		t.Errorf("the converged re-run made %d HTTP and %d OCI requests, want none", n, m)
	}
}

// A lock whose digest does not match Chart.yaml, or no lock at all, is
// refused with how to fix it; dependencyUpdate: true resolves without one.
func TestDependenciesRefused(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	f := newFixture(t)
	repo := chartsrc.NewHTTPRepo(t, chartsrc.Auth{}, "demo")
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{})
	reg.Push(t, "caps")

	bad := unvendoredChart(t, repo.URL, reg.URL(), true, "sha256:"+strings.Repeat("0", 64))
	_, err := f.try(f.step("bad", spec.Helm{Chart: bad}), stepTimeout)
	if err == nil || !strings.Contains(err.Error(), "Chart.lock does not match the dependencies in Chart.yaml") || !strings.Contains(err.Error(), "run helm dependency update") {
		t.Errorf("wrong lock digest: %v", err)
	}

	none := unvendoredChart(t, repo.URL, reg.URL(), false, "")
	_, err = f.try(f.step("nolock", spec.Helm{Chart: none}), stepTimeout)
	if err == nil || !strings.Contains(err.Error(), "nor a Chart.lock") || !strings.Contains(err.Error(), "dependencyUpdate: true") {
		t.Errorf("no lock: %v", err)
	}
	out := f.run(f.step("nolock", spec.Helm{Chart: none, DependencyUpdate: true, Values: map[string]any{"demo": map[string]any{"replicaCount": 1}}}), stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release nolock revision 1")

	// A repository nothing answers on fails the step, naming the
	// dependency; it is not the API server being unreachable.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	_, err = f.try(f.step("gone", spec.Helm{Chart: unvendoredChart(t, gone.URL, reg.URL(), true, "")}), stepTimeout)
	if err == nil || !strings.Contains(err.Error(), "dependency demo") || kube.IsUnreachable(err) {
		t.Errorf("a dependency's repository refusing connections: %v (reported as the cluster unreachable: %t)", err, kube.IsUnreachable(err))
	}
}

// An umbrella chart that vendors a subchart as a directory whose own
// dependencies are not vendored (the script ran `cd charts/sub; helm
// dependency update` first: trial 46v's odk-central) installs with
// dependencyUpdate: true: the subchart gets its dependencies too.
func TestSubchartDependenciesBuilt(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	f := newFixture(t)
	repo := chartsrc.NewHTTPRepo(t, chartsrc.Auth{}, "demo")
	dir := t.TempDir()
	sub := filepath.Join(dir, "charts", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p string, v any) {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "Chart.yaml"), map[string]any{"apiVersion": "v2", "name": "umbrella", "version": "1.0.0",
		"dependencies": []*chartv2.Dependency{{Name: "sub", Version: "0.1.0"}}})
	write(filepath.Join(sub, "Chart.yaml"), map[string]any{"apiVersion": "v2", "name": "sub", "version": "0.1.0",
		"dependencies": []*chartv2.Dependency{{Name: "demo", Version: "~0.1.0", Repository: repo.URL}}})

	out := f.run(f.step("umbsub", spec.Helm{Chart: dir, DependencyUpdate: true, Values: map[string]any{"sub": map[string]any{"demo": map[string]any{"replicaCount": 1}}}}), stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release umbsub revision 1")
	if d := f.configMap("umbsub-demo"); d["message"] != "hello from demo" {
		t.Errorf("the subchart's demo ConfigMap: %v", d)
	}
}
