package chartsrc_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/getter"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/registry"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/cluster"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &testCluster)) }

var creds = chartsrc.Auth{Username: "khook", Password: "s3cret"}

// helmEnv holds Helm's client-side state for one test, all in t.TempDir():
// no HELM_* variable and no file under $HOME is read or written.
type helmEnv struct {
	t                           *testing.T
	ns                          string
	cfg                         *action.Configuration
	repoConfig, repoCache, dest string
}

func newHelmEnv(t *testing.T) *helmEnv {
	t.Helper()
	ns := testCluster.Namespace(t)
	dir := t.TempDir()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &testCluster.Kubeconfig
	flags.Namespace = &ns
	cacheDir := filepath.Join(dir, "kube-cache")
	flags.CacheDir = &cacheDir
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatalf("helm configuration: %v", err)
	}
	h := &helmEnv{t: t, ns: ns, cfg: cfg,
		repoConfig: filepath.Join(dir, "repositories.yaml"), repoCache: filepath.Join(dir, "repository"), dest: filepath.Join(dir, "charts")}
	for _, d := range []string{h.repoCache, h.dest} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// install installs the chart at path (directory or .tgz) and waits for its
// resources with Helm's watcher strategy.
func (h *helmEnv) install(release, path string, vals map[string]any) (*releasev1.Release, error) {
	h.t.Helper()
	ch, err := loader.Load(path)
	if err != nil {
		h.t.Fatalf("load %s: %v", path, err)
	}
	inst := action.NewInstall(h.cfg)
	inst.ReleaseName, inst.Namespace = release, h.ns
	inst.WaitStrategy, inst.WaitForJobs, inst.Timeout = kube.StatusWatcherStrategy, true, 60*time.Second
	rel, err := inst.RunWithContext(h.t.Context(), ch, vals)
	r, _ := rel.(*releasev1.Release)
	return r, err
}

// addRepo does what `helm repo add` does, with every file in the test's
// temporary directory, and returns the repository's name.
func (h *helmEnv) addRepo(url string, auth chartsrc.Auth) (string, error) {
	entry := &repo.Entry{Name: "khook-test", URL: url, Username: auth.Username, Password: auth.Password}
	cr, err := repo.NewChartRepository(entry, getter.Getters())
	if err != nil {
		return "", err
	}
	cr.CachePath = h.repoCache
	if _, err := cr.DownloadIndexFile(); err != nil {
		return "", err
	}
	f := repo.NewFile()
	f.Update(entry)
	return entry.Name, f.WriteFile(h.repoConfig, 0o600)
}

// download fetches ref (repo/chart or oci://...) at chartsrc.Version.
func (h *helmEnv) download(ref string, auth chartsrc.Auth, rc *registry.Client) (string, error) {
	dl := downloader.ChartDownloader{
		Out:              io.Discard,
		Getters:          getter.Getters(),
		RepositoryConfig: h.repoConfig,
		RepositoryCache:  h.repoCache,
		ContentCache:     filepath.Join(h.repoCache, "content"),
		RegistryClient:   rc,
		Options:          []getter.Option{getter.WithBasicAuth(auth.Username, auth.Password)},
	}
	if rc != nil {
		dl.Options = append(dl.Options, getter.WithRegistryClient(rc), getter.WithPlainHTTP(true))
	}
	path, _, err := dl.DownloadTo(ref, chartsrc.Version, h.dest)
	return path, err
}

func checkDeployed(t *testing.T, rel *releasev1.Release, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if rel.Info.Status != "deployed" {
		t.Errorf("release status %q, want deployed", rel.Info.Status)
	}
	if !strings.Contains(rel.Info.Notes, "serves \"hello from demo\"") {
		t.Errorf("NOTES not rendered: %q", rel.Info.Notes)
	}
}

func TestInstallFromLocalPath(t *testing.T) {
	t.Parallel()
	h := newHelmEnv(t)
	rel, err := h.install("local", chartsrc.ChartDir("demo"), nil)
	checkDeployed(t, rel, err)
	cm, err := testCluster.Client.CoreV1().ConfigMaps(h.ns).Get(t.Context(), "local-demo", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "hello from demo" {
		t.Errorf("configmap local-demo: %v, data %v", err, cm.Data)
	}
}

func TestInstallFromHTTPRepoWithBasicAuth(t *testing.T) {
	t.Parallel()
	h := newHelmEnv(t)
	r := chartsrc.NewHTTPRepo(t, creds, "demo", "withcrd", "failhook")
	if _, err := h.addRepo(r.URL, chartsrc.Auth{}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("index without credentials: %v, want a 401 error", err)
	}
	name, err := h.addRepo(r.URL, creds)
	if err != nil {
		t.Fatalf("add repo: %v", err)
	}
	path, err := h.download(name+"/demo", creds, nil)
	if err != nil {
		t.Fatalf("download: %v", err)
	}
	rel, err := h.install("fromrepo", path, map[string]any{"replicaCount": 3})
	checkDeployed(t, rel, err)
	d, err := testCluster.Client.AppsV1().Deployments(h.ns).Get(t.Context(), "fromrepo-demo", metav1.GetOptions{})
	if err != nil || d.Status.AvailableReplicas != 3 {
		t.Errorf("deployment fromrepo-demo after a waited install: %v, %d available, want 3", err, d.Status.AvailableReplicas)
	}
}

func TestInstallFromOCIWithHtpasswd(t *testing.T) {
	t.Parallel()
	h := newHelmEnv(t)
	reg := chartsrc.NewOCIRegistry(t, creds)
	ref := reg.Push(t, "demo")
	anonymous := (&chartsrc.OCIRegistry{Host: reg.Host}).Client(t)
	if _, err := h.download(ref, chartsrc.Auth{}, anonymous); err == nil {
		t.Errorf("pull without credentials succeeded, want an authentication error")
	}
	path, err := h.download(ref, creds, reg.Client(t))
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	rel, err := h.install("fromoci", path, nil)
	checkDeployed(t, rel, err)
}

// The chart's CRD is installed first and its custom resource is served.
func TestInstallChartWithCRD(t *testing.T) {
	t.Parallel()
	h := newHelmEnv(t)
	if _, err := h.install("crd", chartsrc.ChartDir("withcrd"), nil); err != nil {
		t.Fatalf("install: %v", err)
	}
	dyn, err := dynamic.NewForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	w, err := dyn.Resource(schema.GroupVersionResource{Group: "khook.test", Version: "v1", Resource: "widgets"}).Namespace(h.ns).Get(t.Context(), "crd", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get widget: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 {
		t.Errorf("widget size %d, want 3", size)
	}
}

// The post-install hook's job fails on the test cluster, so the install does.
func TestFailingHookFailsInstall(t *testing.T) {
	t.Parallel()
	h := newHelmEnv(t)
	rel, err := h.install("hook", chartsrc.ChartDir("failhook"), nil)
	if err == nil {
		t.Fatalf("install succeeded (status %s), want the post-install hook to fail", rel.Info.Status)
	}
	if !strings.Contains(err.Error(), "hook-post-install") && !strings.Contains(err.Error(), "post-install") {
		t.Errorf("error does not name the failed hook: %v", err)
	}
	t.Logf("install error: %v", err)
}

// Already packaged charts (the public corpus) are served as they are, from
// the HTTP repository and the OCI registry.
func TestInstallPackagedFromHTTPRepoAndOCI(t *testing.T) {
	t.Parallel()
	h := newHelmEnv(t)
	tgz := chartsrc.Package(t, "demo", t.TempDir())
	r := chartsrc.NewHTTPRepoFromFiles(t, chartsrc.Auth{}, tgz)
	name, err := h.addRepo(r.URL, chartsrc.Auth{})
	if err != nil {
		t.Fatalf("add repo: %v", err)
	}
	path, err := h.download(name+"/demo", chartsrc.Auth{}, nil)
	if err != nil {
		t.Fatalf("download: %v", err)
	}
	rel, err := h.install("packaged-repo", path, nil)
	checkDeployed(t, rel, err)

	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{})
	ref := reg.PushFile(t, tgz)
	if want := reg.URL() + "/demo"; ref != want {
		t.Errorf("PushFile returned %s, want %s", ref, want)
	}
	path, err = h.download(ref, chartsrc.Auth{}, reg.Client(t))
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	rel, err = h.install("packaged-oci", path, nil)
	checkDeployed(t, rel, err)
}
