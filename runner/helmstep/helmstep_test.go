package helmstep

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

const stepTimeout = time.Minute

func TestInstallFromHTTPRepoWithAuth(t *testing.T) {
	f := newFixture(t)
	rc := demoChart(t, "0.3.0-rc.1")
	repo := serveChartRepo(t, "reader", "s3cret-repo-pass", demoChart(t, "0.1.0"), demoChart(t, "0.2.0"), rc)

	// Unpinned: the latest stable version (0.2.0, listed with an absolute URL).
	out := f.run(f.step("latest", spec.Helm{Chart: "demo", Repo: repo.URL, Auth: &spec.Auth{Username: repo.User, Password: repo.Pass}}), stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release latest revision 1", "demo 0.2.0", repo.URL)
	if out.Writes == 0 {
		t.Errorf("an install reported 0 writes")
	}

	// Pinned, credentials as URL userinfo; 0.1.0 is listed with a relative URL.
	withUserinfo := strings.Replace(repo.URL, "http://", "http://"+repo.User+":"+repo.Pass+"@", 1)
	out = f.run(f.step("pinned", spec.Helm{Chart: "demo", Repo: withUserinfo, Version: "0.1.0"}), stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release pinned revision 1", "demo 0.1.0")
	mustNotContain(t, "detail", out.Detail, repo.Pass)
	if got := f.configMap("pinned-config")["greeting"]; got != "hello" {
		t.Errorf("greeting = %q, want the chart default hello", got)
	}

	// A version the repository does not have: the error lists what it has.
	_, err := f.try(f.step("missing", spec.Helm{Chart: "demo", Repo: withUserinfo, Version: "9.9.9"}), stepTimeout)
	if err == nil {
		t.Fatal("installing a missing version succeeded")
	}
	t.Log(err)
	mustContain(t, "error", err.Error(), "release missing", "no chart demo in version 9.9.9", "0.2.0")
	mustNotContain(t, "error", err.Error(), repo.Pass)
}

func TestInstallFromOCIWithAuth(t *testing.T) {
	f := newFixture(t)
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{Username: "pusher", Password: "s3cret-oci-pass"})
	pushChart(t, reg, demoChart(t, "0.1.0"))
	digest := pushChart(t, reg, demoChart(t, "0.2.0"))
	auth := &spec.Auth{Username: reg.Auth.Username, Password: reg.Auth.Password}
	base := "oci://" + reg.Host + "/charts/demo"

	cases := []struct {
		name, chart, version, want string
		auth                       *spec.Auth
	}{
		{name: "tag", chart: base + ":0.1.0", auth: auth, want: "demo 0.1.0"},
		{name: "digest", chart: base + "@" + digest, auth: auth, want: "demo 0.2.0"},
		{name: "version-field", chart: base, version: "0.1.0", auth: auth, want: "demo 0.1.0"},
		{name: "latest", chart: base, auth: auth, want: "demo 0.2.0"},
		{name: "userinfo", chart: "oci://" + reg.Auth.Username + ":" + reg.Auth.Password + "@" + reg.Host + "/charts/demo:0.2.0", want: "demo 0.2.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := f.run(f.step("oci-"+tc.name, spec.Helm{Chart: tc.chart, Version: tc.version, Auth: tc.auth}), stepTimeout)
			mustContain(t, "detail", out.Detail, "installed release oci-"+tc.name+" revision 1", tc.want)
			mustNotContain(t, "detail", out.Detail, reg.Auth.Password)
		})
	}
}

func TestInstallFromLocalDirAndTgz(t *testing.T) {
	f := newFixture(t)
	out := f.run(f.step("dir", spec.Helm{Chart: "./charts/demo"}), stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release dir revision 1", "demo 0.1.0 from ./charts/demo")

	tgz := packageChart(t, demoChart(t, "0.4.0"), t.TempDir())
	out = f.run(f.step("tgz", spec.Helm{Chart: tgz}), stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release tgz revision 1", "demo 0.4.0")

	_, err := f.try(f.step("nochart", spec.Helm{Chart: "./charts/absent"}), stepTimeout)
	if err == nil {
		t.Fatal("a missing local chart installed")
	}
	mustContain(t, "error", err.Error(), "release nochart", "local chart ./charts/absent not found", filepath.Join(f.baseDir, "charts", "absent"))
}

// The converged re-run of issue #4: nothing changes, no revision, no write;
// values changes and out-of-band edits upgrade.
func TestUpgradeUnchangedAndDrift(t *testing.T) {
	f := newFixture(t)
	st := f.step("demo", spec.Helm{Chart: "./charts/demo", Values: map[string]any{"greeting": "hi"}})
	f.run(st, stepTimeout)

	out := f.run(st, stepTimeout)
	if out.Detail != "release demo unchanged at revision 1" || out.Writes != 0 {
		t.Errorf("re-run = %q with %d writes, want unchanged at revision 1 with 0 writes", out.Detail, out.Writes)
	}
	if n := f.revisions("demo"); n != 1 {
		t.Errorf("revisions after a converged re-run = %d, want 1", n)
	}

	st.Helm.Values = map[string]any{"greeting": "bonjour"}
	out = f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "upgraded release demo to revision 2")
	if got := f.configMap("demo-config")["greeting"]; got != "bonjour" {
		t.Errorf("greeting after upgrade = %q, want bonjour", got)
	}
	if out := f.run(st, stepTimeout); out.Detail != "release demo unchanged at revision 2" {
		t.Errorf("re-run after upgrade = %q", out.Detail)
	}

	// kubectl edit: an update by another field manager.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cms := testCluster.Client.CoreV1().ConfigMaps(f.ns)
	cm, err := cms.Get(ctx, "demo-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "edited"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	diffs, err := Drift(ctx, f.clients, DriftInput{Release: "demo", Namespace: f.ns, Manifest: f.manifest("demo")})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || diffs[0].Kind != "ConfigMap" || diffs[0].Action != model.ActionConfigure {
		t.Fatalf("drift = %v, want the ConfigMap to configure", diffs)
	}
	out = f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "upgraded release demo to revision 3")
	if got := f.configMap("demo-config")["greeting"]; got != "bonjour" {
		t.Errorf("greeting after converging = %q, want bonjour restored", got)
	}

	// A deleted object is drift too.
	if err := cms.Delete(ctx, "demo-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out = f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "upgraded release demo to revision 4")
	f.configMap("demo-config")
}

// manifest is the release's stored manifest, read through Helm.
func (f *fixture) manifest(release string) string {
	f.t.Helper()
	_, last, err := f.exec.open(release, f.ns)
	if err != nil || last == nil {
		f.t.Fatalf("release %s: %v", release, err)
	}
	return last.Manifest
}

func TestValuesMergeInOrder(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "settings:\n  size: from-url")
	}))
	defer srv.Close()
	st := f.step("vals", spec.Helm{
		Chart:      "./charts/demo",
		ValuesFrom: []spec.Source{{File: "./values/base.yaml"}, {URL: srv.URL + "/v.yaml"}},
		Values:     map[string]any{"settings": map[string]any{"color": "inline"}},
	})
	f.run(st, stepTimeout)
	got := f.configMap("vals-config")
	want := map[string]string{"greeting": "from-file", "color": "inline", "size": "from-url"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (file, then url, then values)", k, got[k], v)
		}
	}
	if out := f.run(st, stepTimeout); !strings.Contains(out.Detail, "unchanged") {
		t.Errorf("re-run with the same merged values = %q, want unchanged", out.Detail)
	}
}

func TestSkipIfInstalled(t *testing.T) {
	f := newFixture(t)
	st := f.step("skipper", spec.Helm{Chart: "./charts/demo", SkipIf: "installed"})
	out := f.run(st, stepTimeout)
	if out.Skipped {
		t.Fatal("skipIf: installed skipped a release that did not exist")
	}
	st.Helm.Values = map[string]any{"greeting": "ignored"}
	out = f.run(st, stepTimeout)
	if !out.Skipped || out.SkipReason != "release skipper already installed (revision 1; skipIf: installed)" || out.Writes != 0 {
		t.Errorf("re-run = %+v, want skipped: release skipper already installed (revision 1; skipIf: installed), 0 writes", out)
	}
}

func TestAtomicRollbackAndFailureMessage(t *testing.T) {
	f := newFixture(t)
	st := f.step("atom", spec.Helm{Chart: "./charts/demo", Atomic: true, Wait: true})
	f.run(st, stepTimeout)

	st.Helm.Values = map[string]any{"greeting": "broken", "podAnnotations": map[string]any{"khook.test/never-ready": "true"}}
	_, err := f.try(st, 6*time.Second)
	if err == nil {
		t.Fatal("an upgrade whose pods never become ready succeeded")
	}
	t.Log(err)
	mustContain(t, "error", err.Error(), "release atom", "chart demo 0.1.0", "upgrade failed", "rolled back")
	if got := f.configMap("atom-config")["greeting"]; got != "hello" {
		t.Errorf("greeting after rollback = %q, want hello (revision 1's)", got)
	}

	// A failed first install with atomic leaves no release behind.
	first := f.step("atom-first", spec.Helm{Chart: "./charts/demo", Atomic: true,
		Values: map[string]any{"podAnnotations": map[string]any{"khook.test/never-ready": "true"}}})
	_, err = f.try(first, 6*time.Second)
	if err == nil {
		t.Fatal("an install whose pods never become ready succeeded")
	}
	t.Log(err)
	mustContain(t, "error", err.Error(), "release atom-first", "install failed", "uninstalled")
	if n := f.revisions("atom-first"); n != 0 {
		t.Errorf("atomic install left %d revisions", n)
	}
}

func TestAuthFailureNamesNoPassword(t *testing.T) {
	f := newFixture(t)
	repo := serveChartRepo(t, "reader", "right-pass", demoChart(t, "0.1.0"))
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{Username: "pusher", Password: "right-pass"})
	pushChart(t, reg, demoChart(t, "0.1.0"))
	const wrong = "wr0ng-Pa55word"
	for name, h := range map[string]spec.Helm{
		"repo": {Chart: "demo", Repo: repo.URL, Version: "0.1.0", Auth: &spec.Auth{Username: "reader", Password: wrong}},
		"oci":  {Chart: "oci://" + reg.Host + "/charts/demo:0.1.0", Auth: &spec.Auth{Username: "pusher", Password: wrong}},
		"userinfo": {Chart: "demo", Version: "0.1.0",
			Repo: strings.Replace(repo.URL, "http://", "http://reader:"+wrong+"@", 1)},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.try(f.step("auth-"+name, h), stepTimeout)
			if err == nil {
				t.Fatal("a wrong password was accepted")
			}
			t.Log(err)
			mustContain(t, "error", err.Error(), "release auth-"+name, "credentials were rejected")
			mustNotContain(t, "error", err.Error(), wrong)
		})
	}
}

func TestUninstall(t *testing.T) {
	f := newFixture(t)
	f.run(f.step("gone", spec.Helm{Chart: "./charts/demo"}), stepTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()

	out, err := f.exec.Uninstall(ctx, "gone", f.ns, false)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "detail", out.Detail, "uninstalled release gone (revision 1)")
	if out.Writes == 0 {
		t.Error("uninstall reported 0 writes")
	}
	if _, err := testCluster.Client.CoreV1().ConfigMaps(f.ns).Get(ctx, "gone-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap after uninstall: %v, want NotFound", err)
	}
	if n := f.revisions("gone"); n != 0 {
		t.Errorf("uninstall left %d revisions", n)
	}

	out, err = f.exec.Uninstall(ctx, "gone", f.ns, true)
	if err != nil || out.Writes != 0 {
		t.Errorf("uninstalling an absent release with ignoreNotFound: %v, %d writes", err, out.Writes)
	}
	_, err = f.exec.Uninstall(ctx, "gone", f.ns, false)
	if err == nil {
		t.Fatal("uninstalling an absent release without ignoreNotFound succeeded")
	}
	mustContain(t, "error", err.Error(), "release gone not found in namespace "+f.ns)
}

// Uninstall keeps a CRD the chart rendered from a template, as Helm keeps
// those of crds/: deleting it would delete every resource of its kind in
// the cluster. The release's other objects and history go.
func TestUninstallKeepsTemplatedCRDs(t *testing.T) {
	f := newFixture(t)
	group := f.ns + ".khook.test"
	crd := "gadgets." + group
	f.run(f.step("crdt", spec.Helm{Chart: "./charts/crdtemplate", Values: map[string]any{"group": group}}), stepTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	crds := testCluster.Client.Discovery().RESTClient()
	t.Cleanup(func() {
		_ = crds.Delete().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).Do(context.Background()).Error()
	})

	out, err := f.exec.Uninstall(ctx, "crdt", f.ns, false)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "detail", out.Detail, "kept its CRD "+crd)
	if err := crds.Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).Do(ctx).Error(); err != nil {
		t.Errorf("CRD %s after uninstall: %v, want it kept", crd, err)
	}
	if _, err := testCluster.Client.CoreV1().ConfigMaps(f.ns).Get(ctx, "crdt-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap after uninstall: %v, want NotFound", err)
	}
	if n := f.revisions("crdt"); n != 0 {
		t.Errorf("uninstall left %d revisions", n)
	}
}

// CI runs khook with a read-only root and no HOME: Helm's cache, config and
// registry credentials must not go there.
func TestNothingWrittenUnderHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"} {
		t.Setenv(v, "")
	}
	f := newFixture(t)
	repo := serveChartRepo(t, "u", "p", demoChart(t, "0.1.0"))
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{Username: "u", Password: "p"})
	pushChart(t, reg, demoChart(t, "0.1.0"))
	f.run(f.step("home-repo", spec.Helm{Chart: "demo", Repo: repo.URL, Auth: &spec.Auth{Username: "u", Password: "p"}}), stepTimeout)
	f.run(f.step("home-oci", spec.Helm{Chart: "oci://" + reg.Host + "/charts/demo:0.1.0", Auth: &spec.Auth{Username: "u", Password: "p"}}), stepTimeout)
	entries, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("Helm wrote %s under HOME", filepath.Join(home, e.Name()))
	}
	tmp := f.exec.charts.TempDir()
	if err := f.exec.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("Close left the temp dir %s: %v", tmp, err)
	}
}

func TestCreateNamespace(t *testing.T) {
	f := newFixture(t)
	ns := f.ns + "-new"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = testCluster.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	_, err := f.try(f.step("nons", spec.Helm{Chart: "./charts/demo", Namespace: ns}), stepTimeout)
	if err == nil {
		t.Fatal("installing into a missing namespace without createNamespace succeeded")
	}
	t.Log(err)
	mustContain(t, "error", err.Error(), "release nons in namespace "+ns, "install failed", "not found", "set createNamespace: true")

	out := f.run(f.step("withns", spec.Helm{Chart: "./charts/demo", Namespace: ns, CreateNamespace: true}), stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release withns revision 1")
	if out := f.run(f.step("withns", spec.Helm{Chart: "./charts/demo", Namespace: ns, CreateNamespace: true}), stepTimeout); out.Writes != 0 {
		t.Errorf("re-run = %q with %d writes, want unchanged with none", out.Detail, out.Writes)
	}
}
