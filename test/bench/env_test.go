package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/e2e/apiproxy"
	"github.com/khook/khook/test/helmcli"
	"github.com/khook/khook/test/needtool"
)

// HelmVersion is the helm CLI the script uses: go.mod's pin, which test/helmcli
// builds (TestBenchToolPins holds the two together).
const HelmVersion = "v4.3.1"

// kubectlPath is the kubectl the script uses.
const kubectlPath = "/usr/bin/kubectl"

type benchEnv struct {
	testdata string
	helm     string
	kubectl  string
	// helmfile and helmPlugins (HELM_PLUGINS, with helm-diff) are empty
	// when the helmfile arm is off or its tools are not built.
	helmfile    string
	helmPlugins string
	khookBin    string
	home        string
	kubeconfig  string
	proxy       *apiproxy.Proxy
	repo        *chartRepo
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		b.Fatal(err)
	}
	e := newTools(b)
	e.testdata = testdata
	e.repo = serveCharts(b, "bench-reader", "bench-Pa55", "alpha", "beta", "gamma")
	return e
}

// newTools readies the contenders (the helm and kubectl CLIs, khook built
// from this checkout) behind a request-counting proxy.
func newTools(b *testing.B) *benchEnv {
	b.Helper()
	if _, err := os.Stat(kubectlPath); err != nil {
		needtool.Missing(b, "kubectl", "kubectl is not at %s: %v", kubectlPath, err)
	}
	tmp := b.TempDir()
	e := &benchEnv{kubectl: kubectlPath, home: filepath.Join(tmp, "home")}
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		b.Fatal(err)
	}
	if !KhookOnly() {
		e.helm = helmCLI(b)
	}
	if armOn("helmfile") {
		var err error
		if e.helmfile, e.helmPlugins, err = helmfileTools(); err != nil {
			b.Logf("the helmfile arm is skipped: %v", err)
		}
	}
	e.khookBin = buildKhook(b, tmp)
	e.proxy = apiproxy.Start(b, kube.RESTConfig)
	e.kubeconfig = e.proxy.Kubeconfig
	return e
}

// helmCLI returns the helm binary: go.mod's Helm, built once by test/helmcli
// (make test's tests share it).
func helmCLI(b *testing.B) string {
	b.Helper()
	return helmcli.Binary(b)
}

// KhookOnlyEnv, set to 1, measures khook alone: the helm + kubectl script
// arm is neither generated nor run (the platform's converge then applies
// khook's workload only), so `-bench Platform/plan-diff` runs khook's
// plan --diff without the slow script.
const KhookOnlyEnv = "KHOOK_BENCH_KHOOK_ONLY"

// KhookOnly reports whether KhookOnlyEnv is set.
func KhookOnly() bool { return os.Getenv(KhookOnlyEnv) == "1" }

// KhookBinEnv names a prebuilt khook binary to measure instead of building
// the working tree (e.g. one built from a commit with git archive).
const KhookBinEnv = "KHOOK_BENCH_KHOOK"

// buildKhook builds this checkout's khook binary.
func buildKhook(b *testing.B, dir string) string {
	b.Helper()
	if p := os.Getenv(KhookBinEnv); p != "" {
		return p
	}
	root, err := exec.Command(goCmd(), "env", "GOMOD").Output()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "khook")
	cmd := exec.Command(goCmd(), "build", "-o", bin, ".")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("cannot build khook from the working tree (or set %s to a khook binary): %v\n%s", KhookBinEnv, err, out)
	}
	return bin
}

func goCmd() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// chartRepo is an HTTP chart repository behind basic auth.
type chartRepo struct{ URL, User, Pass string }

// serveCharts serves the shared demo test chart under each name (three
// charts), version 0.1.0, from a loopback chart repository behind basic auth
// (chartsrc.NewHTTPRepo serves charts under their own names only).
func serveCharts(b *testing.B, user, pass string, names ...string) *chartRepo {
	b.Helper()
	dir := b.TempDir()
	idx := repo.NewIndexFile()
	for _, name := range names {
		ch, err := loader.Load(chartsrc.ChartDir("demo"))
		if err != nil {
			b.Fatal(err)
		}
		ch.Metadata.Name, ch.Metadata.Version = name, "0.1.0"
		p, err := chartutil.Save(ch, dir)
		if err != nil {
			b.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if err := idx.MustAdd(ch.Metadata, filepath.Base(p), "", "sha256:"+hex.EncodeToString(sum[:])); err != nil {
			b.Fatal(err)
		}
	}
	idx.SortEntries()
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		b.Fatal(err)
	}
	files := http.StripPrefix("/charts/", http.FileServer(http.Dir(dir)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	}))
	b.Cleanup(srv.Close)
	return &chartRepo{URL: fmt.Sprintf("%s/charts", srv.URL), User: user, Pass: pass}
}
