package chartsource

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

func fetchGit(t *testing.T, h *spec.Helm) (*Source, error) {
	t.Helper()
	e := New(nil, t.TempDir(), redact.New(), Options{})
	t.Cleanup(func() { e.Close() })
	return e.Fetch(context.Background(), h)
}

// A chart in a git repository is read at the commit its ref names: a tag
// (annotated, peeled to its commit), a branch, a full commit hash, the
// charts folder or the chart's own folder; the digest is the commit.
func TestGitChartRefs(t *testing.T) {
	r := chartsrc.NewGitRepo(t, chartsrc.Auth{}, "demo", "caps")
	v1 := r.Head(t)
	for _, repo := range []string{
		r.RepoURL("v1"), r.RepoURL("main"), r.RepoURL(v1), r.RepoURL("refs/tags/v1"),
		"git+" + r.URL + "@charts/demo?ref=v1&sparse=0",
	} {
		src, err := fetchGit(t, &spec.Helm{Chart: "demo", Repo: repo, Version: chartsrc.Version})
		if err != nil {
			t.Fatalf("%s: %v", repo, err)
		}
		if src.Digest != "git:"+v1 || src.Chart.Name() != "demo" || len(src.Chart.Templates) == 0 {
			t.Errorf("%s: digest %s, chart %s with %d templates; want git:%s, demo", repo, src.Digest, src.Chart.Name(), len(src.Chart.Templates), v1)
		}
		if !strings.Contains(src.What, "(commit "+v1[:12]+")") {
			t.Errorf("%s: What = %q, want the commit named", repo, src.What)
		}
	}

	// main moves on; v1 stays where it was.
	chart := filepath.Join(r.Dir, "charts", "demo", "Chart.yaml")
	b, _ := os.ReadFile(chart)
	if err := os.WriteFile(chart, []byte(strings.Replace(string(b), "version: 0.1.0", "version: 0.2.0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	v2 := r.Commit(t, "demo 0.2.0")
	r.Push(t)
	for ref, want := range map[string]string{"main": v2, "v1": v1, v1: v1} {
		src, err := fetchGit(t, &spec.Helm{Chart: "demo", Repo: r.RepoURL(ref)})
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if src.Digest != "git:"+want {
			t.Errorf("ref %s: digest %s, want git:%s", ref, src.Digest, want)
		}
	}
	// An older commit, no ref's tip, fetched by its hash.
	if _, err := fetchGit(t, &spec.Helm{Chart: "demo", Repo: r.RepoURL(v1), Version: "0.1.0"}); err != nil {
		t.Errorf("v1 by hash after main moved: %v", err)
	}
}

// Each way a git chart can be wrong is one sentence naming what to change.
func TestGitChartErrors(t *testing.T) {
	r := chartsrc.NewGitRepo(t, chartsrc.Auth{Username: "ci", Password: "s3cr3t-git-token"}, "demo", "caps")
	authed := strings.Replace(r.URL, "http://", "http://ci:s3cr3t-git-token@", 1)
	if _, err := fetchGit(t, &spec.Helm{Chart: "demo", Repo: "git+" + authed + "@charts?ref=v1"}); err != nil {
		t.Fatalf("with credentials in the URL: %v", err)
	}
	if _, err := fetchGit(t, &spec.Helm{Chart: "demo", Repo: r.RepoURL("v1"), Auth: &spec.Auth{Username: "ci", Password: "s3cr3t-git-token"}}); err != nil {
		t.Fatalf("with auth:: %v", err)
	}
	for name, tc := range map[string]struct {
		h    spec.Helm
		want string
	}{
		"no such ref":     {spec.Helm{Chart: "demo", Repo: "git+" + authed + "@charts?ref=v9"}, "has no tag or branch v9 (tags: v1; branches: main)"},
		"no such chart":   {spec.Helm{Chart: "web", Repo: "git+" + authed + "@charts?ref=v1"}, "has no chart web in charts/ (charts there: caps, demo)"},
		"no such folder":  {spec.Helm{Chart: "demo", Repo: "git+" + authed + "@deploy?ref=v1"}, "has no folder deploy/"},
		"folder is other": {spec.Helm{Chart: "web", Repo: "git+" + authed + "@charts/demo?ref=v1"}, "charts/demo/ is chart demo, not web: write chart: demo"},
		"version":         {spec.Helm{Chart: "demo", Version: "1.x", Repo: "git+" + authed + "@charts?ref=v1"}, "is version 0.1.0, and the step asks for 1.x"},
		"no credentials":  {spec.Helm{Chart: "demo", Repo: r.RepoURL("v1")}, "the repository needs credentials: add an auth: block"},
		"rejected":        {spec.Helm{Chart: "demo", Repo: r.RepoURL("v1"), Auth: &spec.Auth{Username: "ci", Password: "wrong-token"}}, "the credentials were rejected"},
	} {
		_, err := fetchGit(t, &tc.h)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to say %q", name, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t-git-token") || strings.Contains(err.Error(), "wrong-token") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: the error shows a credential or spans lines: %v", name, err)
		}
	}
}

// A symlink in the chart is followed inside the commit, as a checkout and
// helm package would; one that leaves the repository is refused.
func TestGitChartSymlinks(t *testing.T) {
	r := chartsrc.NewGitRepo(t, chartsrc.Auth{}, "demo")
	shared := filepath.Join(r.Dir, "shared")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "extra.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../shared/extra.yaml", filepath.Join(r.Dir, "charts", "demo", "templates", "extra.yaml")); err != nil {
		t.Fatal(err)
	}
	r.Commit(t, "linked template")
	r.Push(t)
	src, err := fetchGit(t, &spec.Helm{Chart: "demo", Repo: r.RepoURL("main")})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range src.Chart.Templates {
		found = found || f.Name == "templates/extra.yaml" && strings.Contains(string(f.Data), "name: extra")
	}
	if !found {
		t.Errorf("the linked template is not in the chart")
	}

	if err := os.Symlink("../../../../outside", filepath.Join(r.Dir, "charts", "demo", "templates", "out.yaml")); err != nil {
		t.Fatal(err)
	}
	r.Commit(t, "link out")
	r.Push(t)
	_, err = fetchGit(t, &spec.Helm{Chart: "demo", Repo: r.RepoURL("main")})
	if err == nil || !strings.Contains(err.Error(), "symlink charts/demo/templates/out.yaml points outside the repository") {
		t.Errorf("err = %v, want the escaping symlink refused", err)
	}
}

// A public chart kept in its project's git repository (local-path-
// provisioner's deploy/chart, the URL trial 46w's helmfile names) loads
// from git exactly as its released package does: the same templates,
// CRDs, values and version.
func TestGitChartRealChartAsPackaged(t *testing.T) {
	tgz := chartsrc.RealChart(t, chartsrc.RealChartsDir(t), "local-path-provisioner", "0.0.30")
	r := chartsrc.NewGitRepo(t, chartsrc.Auth{})
	r.Unpack(t, tgz, "deploy/chart")
	r.Commit(t, "release v0.0.30")
	r.Tag(t, "v0.0.30")
	src, err := fetchGit(t, &spec.Helm{Chart: "local-path-provisioner", Version: "0.0.30",
		Repo: "git+" + r.URL + "@deploy/chart?ref=v0.0.30"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := loader.Load(tgz)
	if err != nil {
		t.Fatal(err)
	}
	files := func(ch *chartv2.Chart) map[string]string {
		out := map[string]string{}
		for _, f := range append(append([]*common.File{}, ch.Templates...), ch.Files...) {
			out[f.Name] = string(f.Data)
		}
		return out
	}
	if diff := cmp.Diff(files(want), files(src.Chart)); diff != "" {
		t.Errorf("the chart from git differs from its package (-package +git):\n%s", diff)
	}
	if diff := cmp.Diff(want.Values, src.Chart.Values); diff != "" || src.Chart.Metadata.Version != "0.0.30" || len(src.Chart.Templates) < 5 {
		t.Errorf("values or version differ (%s, %d templates):\n%s", src.Chart.Metadata.Version, len(src.Chart.Templates), diff)
	}
}

// A repository sending more than khook fetches for a chart is cut off,
// saying why.
func TestGitChartFetchBounded(t *testing.T) {
	r := chartsrc.NewGitRepo(t, chartsrc.Auth{}, "demo")
	big := make([]byte, 256<<10)
	rand.Read(big) // incompressible: the pack is as large
	if err := os.WriteFile(filepath.Join(r.Dir, "blob.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	r.Commit(t, "a large file")
	r.Push(t)
	was := maxGitFetch
	maxGitFetch = 64 << 10
	defer func() { maxGitFetch = was }()
	_, err := fetchGit(t, &spec.Helm{Chart: "demo", Repo: r.RepoURL("main")})
	if err == nil || !strings.Contains(err.Error(), "the repository sends more than 65536 bytes for the commit") {
		t.Errorf("err = %v, want the fetch cut off", err)
	}
}
