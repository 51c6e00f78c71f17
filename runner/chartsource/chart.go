package chartsource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v4/pkg/action"
	ci "helm.sh/helm/v4/pkg/chart"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/getter"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/khook/khook/runner/chartsource/cosign"
	"github.com/khook/khook/spec"
)

// Source is a chart as fetched, with a description for messages that
// never holds credentials ("chart demo 0.1.0 from https://charts.example").
type Source struct {
	Chart *chartv2.Chart
	What  string
	// Load loads the chart again, a fresh copy (see helmstep's AsStored).
	Load func() (*chartv2.Chart, error)
	// Archive is the downloaded package (repository and OCI charts).
	Archive []byte
	// Deps are the dependencies built for it (deps.go).
	Deps []DependencyFetch
	// Digest is what the chart's bytes are pinned by: an OCI chart's
	// manifest digest, the sha256 of a repository's or local .tgz ("" for a
	// local directory).
	Digest string
	// Signer names who signed the chart, when the step's verify: held
	// (verify.go); "" without verify:.
	Signer string

	// prov is the chart's .prov as found (nil: none), provAt where it was
	// looked for and provName the file name its sums name.
	prov             []byte
	provAt, provName string
	// registry is where an OCI chart came from, for its cosign signatures.
	registry *cosign.Target
}

// chartRequest is one chart to fetch: the step's, as Fetch reads it once
// from the helm: block, or a dependency its Chart.lock names. The fetchers
// below take only it, so a dependency is fetched as the step's own chart
// is, without a made-up helm: block.
type chartRequest struct {
	chart, version, repo string
	// auth is the auth: block's, nil without one; it wins over a URL's
	// user:password@.
	auth *credentials
	// dependencyUpdate: resolve dependencies that have no Chart.lock.
	dependencyUpdate bool
	// prov: fetch the chart's .prov too (verify.provenance).
	prov bool
}

type credentials struct{ user, pass string }

// Fetch fetches and loads the step's chart.
func (e *Fetcher) Fetch(ctx context.Context, h *spec.Helm) (*Source, error) {
	req := chartRequest{chart: h.Chart, version: h.Version, repo: h.Repo, dependencyUpdate: h.DependencyUpdate,
		prov: h.Verify != nil && h.Verify.Provenance != nil}
	if h.Auth != nil {
		req.auth = &credentials{user: h.Auth.Username, pass: h.Auth.Password}
	}
	var (
		src *Source
		err error
	)
	switch h.ChartKind() {
	case spec.ChartLocal:
		src, err = e.localChart(h, req.prov)
	case spec.ChartOCI:
		src, err = e.ociChart(ctx, req)
	case spec.ChartRepo:
		if spec.IsGitRepo(req.repo) {
			src, err = e.gitChart(ctx, req)
		} else {
			src, err = e.repoChart(ctx, req)
		}
	}
	if err != nil {
		return nil, err
	}
	// Before anything of the chart is used: a chart that fails its
	// verify: is never rendered.
	if err := e.verify(ctx, h, src); err != nil {
		return nil, err
	}
	if err := e.buildDependencies(ctx, req, src); err != nil {
		return nil, err
	}
	if err := checkDependencies(src); err != nil {
		return nil, err
	}
	return src, nil
}

// localChart loads the chart at chart, a path relative to the spec's
// folder or absolute; a packaged one with its .prov beside it when prov.
func (e *Fetcher) localChart(h *spec.Helm, prov bool) (*Source, error) {
	chart, p := h.Chart, h.Chart
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.baseDir, p)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("local chart %s not found (looked at %s): %w", chart, p, unwrapPathError(err))
	}
	if fi.IsDir() && !exists(filepath.Join(p, "Chart.yaml")) {
		return manifestChart(chart, p, h.Release)
	}
	ch, err := loader.Load(p)
	if err != nil {
		return nil, fmt.Errorf("cannot load local chart %s (%s): %w", chart, p, err)
	}
	src := &Source{Chart: ch, What: fmt.Sprintf("chart %s %s from %s", ch.Name(), ch.Metadata.Version, chart),
		Load: func() (*chartv2.Chart, error) { return loader.Load(p) }}
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("cannot read local chart %s: %w", chart, unwrapPathError(err))
		}
		src.Archive, src.Digest = data, sha256Digest(data)
		if prov {
			src.provAt, src.provName = chart+".prov", filepath.Base(p)
			src.prov, _ = os.ReadFile(p + ".prov") // missing: verify says so
		}
	}
	return src, nil
}

// repoChart reads the repository's index.yaml directly (no repositories.yaml,
// no cache under HOME), picks the version and downloads the package.
func (e *Fetcher) repoChart(ctx context.Context, req chartRequest) (*Source, error) {
	name, version := req.chart, req.version
	if i := strings.LastIndex(name, ":"); i > 0 && version == "" {
		name, version = name[:i], name[i+1:]
	}
	repoURL, user, pass, err := e.splitCredentials(req.repo, req.auth)
	if err != nil {
		return nil, err
	}
	g, err := getter.NewHTTPGetter(e.getterOptions(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("cannot set up the HTTP client for chart repository %s: %w", repoURL, err)
	}
	auth := []getter.Option{getter.WithURL(repoURL), getter.WithBasicAuth(user, pass), getter.WithPassCredentialsAll(false)}

	indexURL, err := repo.ResolveReferenceURL(repoURL, "index.yaml")
	if err != nil {
		return nil, fmt.Errorf("chart repository URL %s is not valid: %w", repoURL, err)
	}
	buf, err := g.Get(indexURL, auth...)
	if err != nil {
		return nil, fmt.Errorf("cannot fetch the index of chart repository %s: %w%s", repoURL, err, authHint(err, user != ""))
	}
	idx, err := e.parseIndex(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the index.yaml of chart repository %s is not valid: %w", repoURL, err)
	}
	cv, err := idx.Get(name, version)
	if err != nil {
		want := "any stable version"
		if version != "" {
			want = "version " + version
		}
		return nil, fmt.Errorf("chart repository %s has no chart %s in %s (%s)", repoURL, name, want, availableVersions(idx, name))
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("chart repository %s lists chart %s %s without a download URL", repoURL, name, cv.Version)
	}
	chartURL, err := repo.ResolveReferenceURL(repoURL, cv.URLs[0])
	if err != nil {
		return nil, fmt.Errorf("chart repository %s lists an invalid URL for chart %s %s: %w", repoURL, name, cv.Version, err)
	}
	chartURL, cu, cp, err := e.splitCredentials(chartURL, nil)
	if err != nil {
		return nil, err
	}
	if cu != "" { // credentials written into the index itself
		auth = []getter.Option{getter.WithURL(chartURL), getter.WithBasicAuth(cu, cp)}
	}
	data, err := g.Get(chartURL, auth...)
	if err != nil {
		return nil, fmt.Errorf("cannot download chart %s %s from %s: %w%s", name, cv.Version, chartURL, err, authHint(err, user != ""))
	}
	if err := checkDigest(data.Bytes(), cv.Digest); err != nil {
		return nil, fmt.Errorf("chart %s %s downloaded from %s: %w", name, cv.Version, chartURL, err)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(data.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("chart %s %s downloaded from %s is not a valid chart archive: %w", name, cv.Version, chartURL, err)
	}
	src := &Source{Chart: ch, What: fmt.Sprintf("chart %s %s from %s", ch.Name(), ch.Metadata.Version, repoURL),
		Load: func() (*chartv2.Chart, error) { return loader.LoadArchive(bytes.NewReader(data.Bytes())) }, Archive: data.Bytes(),
		Digest: sha256Digest(data.Bytes())}
	if req.prov {
		// Helm's convention: the .prov sits beside the package.
		src.provAt, src.provName = e.redactor.String(chartURL)+".prov", path.Base(strings.SplitN(chartURL, "?", 2)[0])
		if prov, err := g.Get(chartURL+".prov", auth...); err == nil {
			src.prov = prov.Bytes()
		}
	}
	return src, nil
}

// parseIndex loads an index through Helm's own validation and sorting (it
// reads files only, so the bytes go through the run's temp dir).
func (e *Fetcher) parseIndex(data []byte) (*repo.IndexFile, error) {
	dir, err := e.tempDir()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "index-*.yaml")
	if err != nil {
		return nil, fmt.Errorf("cannot write a temporary file in %s: %w", dir, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return repo.LoadIndexFile(f.Name())
}

func availableVersions(idx *repo.IndexFile, name string) string {
	vs := idx.Entries[name]
	if len(vs) == 0 {
		return "the repository has no chart of that name"
	}
	var list []string
	for i, v := range vs {
		if i == 10 {
			list = append(list, "...")
			break
		}
		list = append(list, v.Version)
	}
	return "available: " + strings.Join(list, ", ")
}

func checkDigest(data []byte, digest string) error {
	if digest == "" {
		return nil
	}
	if got := sha256Digest(data); !strings.EqualFold("sha256:"+strings.TrimPrefix(digest, "sha256:"), got) {
		return fmt.Errorf("digest mismatch: the index says sha256:%s, the download is %s", strings.TrimPrefix(digest, "sha256:"), got)
	}
	return nil
}

// sha256Digest is data's digest as OCI writes one: sha256:<hex>.
func sha256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ociChart pulls a chart from an OCI registry with Helm's registry client;
// credentials stay in memory, the credentials file lives in the run's temp dir.
func (e *Fetcher) ociChart(ctx context.Context, req chartRequest) (*Source, error) {
	raw := strings.TrimPrefix(req.chart, "oci://")
	u, err := url.Parse("oci://" + raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("chart reference %s is not a valid oci:// reference", e.redactor.String(req.chart))
	}
	user, pass := "", ""
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
		e.redactor.Add(pass)
		u.User = nil
	}
	if req.auth != nil {
		user, pass = req.auth.user, req.auth.pass
		e.redactor.Add(pass)
	}
	ref := u.Host + u.Path // host/path/name[:tag][@digest]
	display := "oci://" + ref

	dir, err := e.tempDir()
	if err != nil {
		return nil, err
	}
	opts := []registry.ClientOption{
		registry.ClientOptCredentialsFile(filepath.Join(dir, "registry", "config.json")),
		registry.ClientOptEnableCache(true),
	}
	if e.opts.Transport != nil {
		opts = append(opts, registry.ClientOptHTTPClient(&http.Client{Transport: e.opts.Transport, Timeout: Remaining(ctx)}))
	}
	if user != "" || pass != "" {
		opts = append(opts, registry.ClientOptBasicAuth(user, pass))
	}
	if e.plainHTTP(u.Host) {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	rc, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot set up the registry client for %s: %w", display, err)
	}

	base, tag, digest := splitOCIRef(ref)
	switch {
	case digest != "" && tag == "" && req.version != "":
		ref = base + ":" + req.version + "@" + digest
	case digest != "":
	case tag != "":
		if req.version != "" && req.version != tag {
			return nil, fmt.Errorf("chart reference %s says version %s but version: says %s; write it once", display, tag, req.version)
		}
	default:
		tag, err = e.ociTag(rc, base, req.version)
		if err != nil {
			return nil, fmt.Errorf("cannot pick a version of %s: %w%s", "oci://"+base, err, authHint(err, user != ""))
		}
		ref = base + ":" + tag
	}
	// The .prov layer is found by its media type, wherever it sits.
	res, err := rc.Pull(ref, registry.PullOptWithChart(true), registry.PullOptWithProv(req.prov), registry.PullOptIgnoreMissingProv(true))
	if err != nil {
		return nil, fmt.Errorf("cannot pull chart oci://%s: %w%s", ref, err, authHint(err, user != ""))
	}
	ch, err := loader.LoadArchive(bytes.NewReader(res.Chart.Data))
	if err != nil {
		return nil, fmt.Errorf("chart oci://%s is not a valid chart archive: %w", ref, err)
	}
	src := &Source{Chart: ch, What: fmt.Sprintf("chart %s %s from oci://%s", ch.Name(), ch.Metadata.Version, ref),
		Load: func() (*chartv2.Chart, error) { return loader.LoadArchive(bytes.NewReader(res.Chart.Data)) }, Archive: res.Chart.Data,
		Digest: res.Manifest.Digest, registry: &cosign.Target{Host: u.Host, Repository: strings.TrimPrefix(base, u.Host+"/"),
			PlainHTTP: e.plainHTTP(u.Host), Username: user, Password: pass}}
	if e.opts.Transport != nil {
		src.registry.Transport = e.opts.Transport
	}
	if req.prov {
		// helm package --sign names the package NAME-VERSION.tgz in its sums.
		src.provAt, src.provName = "the manifest "+res.Manifest.Digest+" of oci://"+ref, fmt.Sprintf("%s-%s.tgz", ch.Name(), ch.Metadata.Version)
		if res.Prov != nil && len(res.Prov.Data) > 0 {
			src.prov = res.Prov.Data
		}
	}
	return src, nil
}

// ociTag resolves version: (exact tag, semver range or empty for the latest)
// against the repository's tags, as helm does.
func (e *Fetcher) ociTag(rc *registry.Client, base, version string) (string, error) {
	if _, err := semver.StrictNewVersion(version); err == nil {
		return strings.ReplaceAll(version, "+", "_"), nil // OCI tags cannot hold "+"
	}
	tags, err := rc.Tags(base)
	if err != nil {
		return "", err
	}
	if len(tags) == 0 {
		return "", errors.New("the repository has no semver tags")
	}
	return registry.GetTagMatchingVersionOrConstraint(tags, version)
}

// splitOCIRef splits host/path/name[:tag][@digest].
func splitOCIRef(ref string) (base, tag, digest string) {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], ref[i+1:]
	}
	last := path.Base(ref)
	if i := strings.LastIndex(last, ":"); i >= 0 {
		return ref[:len(ref)-len(last)+i], last[i+1:], digest
	}
	return ref, "", digest
}

// plainHTTP: registries on loopback addresses speak plain HTTP (as Docker
// treats them) unless the executor was told otherwise.
func (e *Fetcher) plainHTTP(hostport string) bool {
	if e.opts.PlainHTTP != nil {
		return *e.opts.PlainHTTP
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// splitCredentials strips user:password@ from a URL; an auth: block wins.
// The password is registered with the redactor before anything can print it.
func (e *Fetcher) splitCredentials(raw string, auth *credentials) (clean, user, pass string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", "", fmt.Errorf("URL %s is not valid: %s", e.redactor.String(raw), e.redactor.String(err.Error()))
	}
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
		e.redactor.Add(pass)
		u.User = nil
	}
	if auth != nil {
		user, pass = auth.user, auth.pass
		e.redactor.Add(pass)
	}
	return u.String(), user, pass, nil
}

func (e *Fetcher) getterOptions(ctx context.Context) []getter.Option {
	opts := []getter.Option{getter.WithTimeout(Remaining(ctx))}
	if e.opts.Transport != nil {
		opts = append(opts, getter.WithTransport(e.opts.Transport))
	}
	return opts
}

// remaining is the time left before ctx's deadline (a generous default when
// there is none), so downloads end with the step.
func Remaining(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left > 0 {
			return left
		}
		return time.Millisecond
	}
	return 5 * time.Minute
}

// authHint adds the likely cause to an authentication failure.
func authHint(err error, hadCredentials bool) string {
	msg := err.Error()
	if !strings.Contains(msg, "401") && !strings.Contains(msg, "403") && !strings.Contains(strings.ToLower(msg), "unauthorized") {
		return ""
	}
	if hadCredentials {
		return " (the credentials were rejected: check the username and password in auth: or the URL)"
	}
	return " (the source needs credentials: add an auth: block or URL userinfo)"
}

func checkDependencies(src *Source) error {
	deps := src.Chart.Metadata.Dependencies
	if len(deps) == 0 {
		return nil
	}
	reqs := make([]ci.Dependency, 0, len(deps))
	for _, d := range deps {
		reqs = append(reqs, d)
	}
	if err := action.CheckDependencies(src.Chart, reqs); err != nil {
		return fmt.Errorf("%s is missing subcharts (package it with its dependencies, e.g. helm dependency build): %w", src.What, err)
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
