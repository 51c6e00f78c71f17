package chartsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// A chart in a git repository (repo: git+https://…@path?ref=…, the
// helm-git plugin's URL) is read as helm-git reads it, in-process: the one
// commit the ref names is fetched shallow into memory, the chart's folder
// is written to the fetcher's temp dir and loaded as a local chart is
// (.helmignore and Helm's size limit hold). Its digest is the commit, so a
// saved plan and the state pin the bytes reviewed; a moved branch or tag
// shows as another commit.

// maxGitFetch bounds what one request of a git chart fetch may download:
// a spec (a pull request's, say) can name any repository, and the commit's
// whole tree comes with the chart. A variable for the test.
var maxGitFetch int64 = 512 << 20

var boundOnce sync.Once

// boundGitHTTP has go-git's HTTP transports (khook's only use of them is
// here) stop a response at maxGitFetch bytes.
func boundGitHTTP() {
	boundOnce.Do(func() {
		c := githttp.NewClient(&http.Client{Transport: capped{http.DefaultTransport}})
		client.InstallProtocol("https", c)
		client.InstallProtocol("http", c)
	})
}

type capped struct{ base http.RoundTripper }

func (c capped) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: maxGitFetch}
	}
	return resp, err
}

type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("the repository sends more than %s for the commit, the most khook fetches for a chart: keep the chart in a smaller repository or publish it to a chart repository", size(maxGitFetch))
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (e *Fetcher) gitChart(ctx context.Context, req chartRequest) (*Source, error) {
	boundGitHTTP()
	g, err := spec.ParseGitRepo(req.repo)
	if err != nil {
		return nil, fmt.Errorf("git chart repository %s %s", e.redactor.String(req.repo), e.redactor.String(err.Error()))
	}
	remote, user, pass, err := e.splitCredentials(g.URL, req.auth)
	if err != nil {
		return nil, err
	}
	var auth transport.AuthMethod
	if user != "" || pass != "" {
		auth = &githttp.BasicAuth{Username: user, Password: pass}
	}
	where := g.Where()
	commit, store, err := fetchCommit(ctx, remote, g.Ref, auth)
	if err != nil {
		return nil, fmt.Errorf("cannot read chart %s from git %s: %s", req.chart, where, e.redactor.String(gitError(err, user != "")))
	}
	root, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("cannot read the tree of commit %s of %s: %v", commit.Hash, where, err)
	}
	folder, err := findChartFolder(root, g.Path, req.chart)
	if err != nil {
		return nil, fmt.Errorf("git %s (commit %.12s): %w", where, commit.Hash, err)
	}
	tmp, err := e.tempDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tmp, "git-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a folder for chart %s: %w", req.chart, err)
	}
	w := &treeWriter{root: root, store: store, budget: archive.MaxDecompressedChartSize}
	if err := w.writeTree(folder, dir, 0); err != nil {
		return nil, fmt.Errorf("chart %s in git %s (commit %.12s): %w", req.chart, where, commit.Hash, err)
	}
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("chart %s in git %s (commit %.12s) is not a valid chart: %w", req.chart, where, commit.Hash, err)
	}
	if err := checkVersion(ch, req.version); err != nil {
		return nil, fmt.Errorf("chart %s in git %s (commit %.12s): %w", req.chart, where, commit.Hash, err)
	}
	return &Source{Chart: ch,
		What:   fmt.Sprintf("chart %s %s from git %s (commit %.12s)", ch.Name(), ch.Metadata.Version, where, commit.Hash),
		Load:   func() (*chartv2.Chart, error) { return loader.Load(dir) },
		Digest: model.GitDigestPrefix + commit.Hash.String()}, nil
}

// fetchCommit fetches the commit ref names (a tag, a branch or a full
// commit hash), one commit deep, into memory.
func fetchCommit(ctx context.Context, url, ref string, auth transport.AuthMethod) (*object.Commit, storer.EncodedObjectStorer, error) {
	store := memory.NewStorage()
	repo, err := git.Init(store, nil)
	if err != nil {
		return nil, nil, err
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}})
	if err != nil {
		return nil, nil, err
	}
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth, PeelingOption: git.AppendPeeled})
	if err != nil {
		return nil, nil, err
	}
	name, hash, err := resolveRef(refs, ref)
	if err != nil {
		return nil, nil, err
	}
	// A named ref is fetched by its name; a bare commit by its hash, which
	// the server must allow (GitHub, GitLab and git http-backend with
	// uploadpack.allowReachableSHA1InWant do).
	spec := config.RefSpec("+" + name.String() + ":" + name.String())
	if name == "" {
		spec = config.RefSpec(hash.String() + ":refs/khook/chart")
	}
	err = remote.FetchContext(ctx, &git.FetchOptions{RefSpecs: []config.RefSpec{spec}, Depth: 1, Auth: auth, Tags: git.NoTags})
	if errors.Is(err, git.ErrExactSHA1NotSupported) {
		return nil, nil, fmt.Errorf("the server does not serve commit %s by its hash: pin a tag that points at it", ref)
	}
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, nil, err
	}
	c, err := repo.CommitObject(hash)
	return c, store, err
}

// resolveRef finds ref among the advertised refs: a tag (peeled to its
// commit), a branch, a full ref name, or a full commit hash.
func resolveRef(refs []*plumbing.Reference, ref string) (plumbing.ReferenceName, plumbing.Hash, error) {
	byName := map[plumbing.ReferenceName]plumbing.Hash{}
	var tags, heads []string
	for _, r := range refs {
		if r.Type() != plumbing.HashReference {
			continue
		}
		byName[r.Name()] = r.Hash()
		switch {
		case r.Name().IsTag() && !strings.HasSuffix(r.Name().String(), "^{}"):
			tags = append(tags, r.Name().Short())
		case r.Name().IsBranch():
			heads = append(heads, r.Name().Short())
		}
	}
	if (spec.GitRepo{Ref: ref}).PinsCommit() {
		h := plumbing.NewHash(ref)
		for n, got := range byName {
			if got == h && (n.IsBranch() || n.IsTag()) && !strings.HasSuffix(n.String(), "^{}") {
				return n, h, nil // at a ref's tip: fetched by name
			}
		}
		return "", h, nil
	}
	for _, n := range []plumbing.ReferenceName{plumbing.NewTagReferenceName(ref), plumbing.NewBranchReferenceName(ref), plumbing.ReferenceName(ref)} {
		h, ok := byName[n]
		if !ok {
			continue
		}
		if peeled, ok := byName[n+"^{}"]; ok { // an annotated tag: its commit
			h = peeled
		}
		return n, h, nil
	}
	return "", plumbing.ZeroHash, fmt.Errorf("the repository has no tag or branch %s (%s)", ref, someRefs(tags, heads))
}

func someRefs(tags, heads []string) string {
	sort.Strings(tags)
	sort.Strings(heads)
	list := func(what string, names []string) string {
		if len(names) > 8 {
			return fmt.Sprintf("%d %s, the last: %s", len(names), what, strings.Join(names[len(names)-8:], ", "))
		}
		if len(names) == 0 {
			return "no " + what
		}
		return what + ": " + strings.Join(names, ", ")
	}
	return list("tags", tags) + "; " + list("branches", heads)
}

// gitError is a fetch error as a sentence, with the likely cause.
func gitError(err error, hadCredentials bool) string {
	denied := errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed)
	switch {
	case denied && hadCredentials:
		return "the credentials were rejected: check the username and password (a token) in auth: or the URL"
	case denied:
		return "the repository needs credentials: add an auth: block (a token as password) or URL userinfo"
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return "there is no git repository at that URL (or it is private: add an auth: block)"
	}
	return err.Error()
}

// findChartFolder is the folder of the chart named name: dir itself when
// it is a chart, else the chart folder under it of that name (by its
// Chart.yaml, as helm-git's index names them).
func findChartFolder(root *object.Tree, dir, name string) (string, error) {
	base := root
	if dir != "" {
		t, err := root.Tree(dir)
		if err != nil {
			return "", fmt.Errorf("has no folder %s/", dir)
		}
		base = t
	}
	if got, ok := chartName(base, ""); ok {
		if got != name {
			return "", fmt.Errorf("%s/ is chart %s, not %s: write chart: %s", dir, got, name, got)
		}
		return dir, nil
	}
	var found []string
	for _, ent := range base.Entries {
		if ent.Mode != filemode.Dir {
			continue
		}
		got, ok := chartName(base, ent.Name)
		if !ok {
			continue
		}
		if got == name {
			return path.Join(dir, ent.Name), nil
		}
		found = append(found, got)
	}
	in := dir + "/"
	if dir == "" {
		in = "the repository's root"
	}
	if len(found) == 0 {
		return "", fmt.Errorf("has no chart in %s (no Chart.yaml there or in its folders)", in)
	}
	sort.Strings(found)
	return "", fmt.Errorf("has no chart %s in %s (charts there: %s)", name, in, strings.Join(found, ", "))
}

// chartName reads the name in sub/Chart.yaml of t; ok is false without one.
func chartName(t *object.Tree, sub string) (string, bool) {
	f, err := t.File(path.Join(sub, "Chart.yaml"))
	if err != nil || f.Size > 1<<20 {
		return "", false
	}
	body, err := f.Contents()
	if err != nil {
		return "", false
	}
	var meta struct {
		Name string `json:"name"`
	}
	if yaml.Unmarshal([]byte(body), &meta) != nil {
		return "", false
	}
	return meta.Name, true
}

// treeWriter writes a folder of a commit to disk: files within Helm's
// size limit for a chart, symlinks resolved inside the commit (a chart's
// link to a shared folder works; one leaving the repository is refused).
type treeWriter struct {
	root   *object.Tree
	store  storer.EncodedObjectStorer
	budget int64
}

// maxLinks bounds the symlinks followed on one path (a loop ends there).
const maxLinks = 8

func (w *treeWriter) writeTree(dir, dest string, links int) error {
	t := w.root
	if dir != "" {
		var err error
		if t, err = w.root.Tree(dir); err != nil {
			return fmt.Errorf("cannot read folder %s: %v", dir, err)
		}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	for _, ent := range t.Entries {
		if ent.Name == "" || ent.Name == "." || ent.Name == ".." || strings.ContainsAny(ent.Name, `/\`) {
			return fmt.Errorf("folder %s has an entry named %q, which no checkout would write", dir, ent.Name)
		}
		if err := w.writeEntry(path.Join(dir, ent.Name), ent.Mode, ent.Hash, filepath.Join(dest, ent.Name), links); err != nil {
			return err
		}
	}
	return nil
}

func (w *treeWriter) writeEntry(p string, mode filemode.FileMode, hash plumbing.Hash, dest string, links int) error {
	switch mode {
	case filemode.Dir:
		return w.writeTree(p, dest, links)
	case filemode.Regular, filemode.Executable, filemode.Deprecated:
		return w.writeBlob(p, hash, dest)
	case filemode.Symlink:
		if links >= maxLinks {
			return fmt.Errorf("symlink %s: more than %d links in a row (a loop?)", p, maxLinks)
		}
		target, err := w.blob(p, hash, 4096)
		if err != nil {
			return err
		}
		to := path.Clean(path.Join(path.Dir(p), string(target)))
		if path.IsAbs(string(target)) || to == ".." || strings.HasPrefix(to, "../") {
			return fmt.Errorf("symlink %s points outside the repository (%s)", p, target)
		}
		ent, err := w.root.FindEntry(to)
		if err != nil {
			return fmt.Errorf("symlink %s points at %s, which the commit does not have", p, to)
		}
		return w.writeEntry(to, ent.Mode, ent.Hash, dest, links+1)
	}
	return nil // a submodule: helm package leaves its empty folder out too
}

func (w *treeWriter) writeBlob(p string, hash plumbing.Hash, dest string) error {
	data, err := w.blob(p, hash, w.budget)
	if err != nil {
		return err
	}
	w.budget -= int64(len(data))
	return os.WriteFile(dest, data, 0o644)
}

// blob reads a file of at most limit bytes.
func (w *treeWriter) blob(p string, hash plumbing.Hash, limit int64) ([]byte, error) {
	b, err := object.GetBlob(w.store, hash)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", p, err)
	}
	if b.Size > limit {
		return nil, fmt.Errorf("%s makes the chart larger than Helm's limit of %d MiB for a chart", p, archive.MaxDecompressedChartSize>>20)
	}
	r, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", p, err)
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, limit))
}

// checkVersion holds the chart to the step's version: (exact, or a
// constraint as a repository's index is read).
func checkVersion(ch *chartv2.Chart, want string) error {
	if want == "" || want == ch.Metadata.Version {
		return nil
	}
	c, err := semver.NewConstraint(want)
	if err != nil {
		return fmt.Errorf("version %q is not a version or a range: %v", want, err)
	}
	v, err := semver.NewVersion(ch.Metadata.Version)
	if err != nil || !c.Check(v) {
		return fmt.Errorf("is version %s, and the step asks for %s: change version: or the ref", ch.Metadata.Version, want)
	}
	return nil
}
