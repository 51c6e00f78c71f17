package chartsource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/provenance"

	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// A chart that declares dependencies: but ships no charts/ (most Git
// repositories ignore it) has them built before rendering, as helm
// dependency build does: each pinned by the chart's Chart.lock, whose
// digest must match Chart.yaml's dependencies, downloaded from its HTTP
// repository or OCI registry and kept in the user cache under the lock's
// digest, so a converged re-run downloads nothing. Without a lock the step
// must say dependencyUpdate: true (resolved on every run, not cached).

// depCacheDir is where built dependencies are kept (under
// $XDG_CACHE_HOME or ~/.cache); "" disables the cache.
func depCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "khook", "chart-deps")
}

// DependencyFetch is one dependency a chart needs that it does not vendor.
type DependencyFetch struct {
	Name, Version, Repository string // as locked (Version a constraint without a lock)
	Cached                    bool   // in the cache: nothing is downloaded
}

func (d DependencyFetch) String() string {
	how := "download"
	if d.Cached {
		how = "cached"
	}
	return fmt.Sprintf("%s %s from %s (%s)", d.Name, d.Version, redactURL(d.Repository), how)
}

// missingDependencies are the chart's declared dependencies it has no
// subchart for (by name; an alias names the copy, not the chart).
func missingDependencies(ch *chartv2.Chart) []*chartv2.Dependency {
	have := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		have[sub.Name()] = true
	}
	var out []*chartv2.Dependency
	for _, d := range ch.Metadata.Dependencies {
		if d != nil && !have[d.Name] {
			out = append(out, d)
		}
	}
	return out
}

// LockDigest is Helm's Chart.lock digest of the chart's dependencies and
// the lock's entries (helm's internal resolver.HashReq).
func LockDigest(req, lock []*chartv2.Dependency) (string, error) {
	data, err := json.Marshal([2][]*chartv2.Dependency{req, lock})
	if err != nil {
		return "", err
	}
	s, err := provenance.Digest(bytes.NewBuffer(data))
	return "sha256:" + s, err
}

// dependencyPlan is what building src's dependencies takes: the ones to
// fetch, pinned by the lock where there is one. The chart is refused with
// how to fix it when it has no lock (and the step does not update
// dependencies) or its lock does not match Chart.yaml.
func dependencyPlan(req chartRequest, src *Source) (fetches []DependencyFetch, cacheKey string, err error) {
	ch := src.Chart
	missing := missingDependencies(ch)
	if len(missing) == 0 {
		return nil, "", nil
	}
	var names []string
	for _, d := range missing {
		names = append(names, d.Name)
	}
	if ch.Lock == nil {
		if !req.dependencyUpdate {
			return nil, "", fmt.Errorf("%s declares dependencies (%s) but has neither their charts in charts/ nor a Chart.lock: run helm dependency update on the chart directory and commit its Chart.lock, or set dependencyUpdate: true on the step to resolve them on every run", src.What, strings.Join(names, ", "))
		}
		for _, d := range missing {
			fetches = append(fetches, DependencyFetch{Name: d.Name, Version: d.Version, Repository: d.Repository})
		}
		return fetches, "", nil
	}
	want, err := LockDigest(ch.Metadata.Dependencies, ch.Lock.Dependencies)
	if err != nil {
		return nil, "", fmt.Errorf("%s: cannot compute the digest of its dependencies: %w", src.What, err)
	}
	if ch.Lock.Digest != want {
		return nil, "", fmt.Errorf("%s: Chart.lock does not match the dependencies in Chart.yaml (the lock's digest is %s, Chart.yaml's dependencies give %s): run helm dependency update on the chart directory and commit the new Chart.lock", src.What, ch.Lock.Digest, want)
	}
	locked := map[string]*chartv2.Dependency{}
	for _, d := range ch.Lock.Dependencies {
		locked[d.Name] = d
	}
	cacheKey = strings.TrimPrefix(want, "sha256:")
	dir := depCacheDir()
	for _, d := range missing {
		l, ok := locked[d.Name]
		if !ok {
			return nil, "", fmt.Errorf("%s: Chart.lock has no entry for dependency %s: run helm dependency update on the chart directory", src.What, d.Name)
		}
		f := DependencyFetch{Name: l.Name, Version: l.Version, Repository: l.Repository}
		if dir != "" {
			_, err := os.Stat(cachePath(dir, cacheKey, l))
			f.Cached = err == nil
		}
		fetches = append(fetches, f)
	}
	return fetches, cacheKey, nil
}

func cachePath(dir, key string, d *chartv2.Dependency) string {
	return filepath.Join(dir, key, d.Name+"-"+d.Version+".tgz")
}

// buildDependencies fetches src's missing dependencies (from the cache
// when locked and cached) and adds them to the chart, and to every copy
// src.Load makes; a subchart the chart vendors as a directory gets its
// own missing dependencies too, as `cd charts/sub; helm dependency
// update` gives it (trial 46v's D10: an umbrella chart's subcharts that
// need bitnami's common).
func (e *Fetcher) buildDependencies(ctx context.Context, req chartRequest, src *Source) error {
	type built struct {
		sub      string // "" for the chart itself
		archives [][]byte
	}
	var all []built
	var fetches []DependencyFetch
	for _, tg := range dependencyTargets(req, src) {
		f, archives, err := e.fetchMissing(ctx, req, &Source{Chart: tg.ch, What: tg.what})
		if err != nil {
			return err
		}
		fetches = append(fetches, f...)
		if len(archives) > 0 {
			all = append(all, built{tg.sub, archives})
		}
	}
	if len(all) == 0 {
		return nil
	}
	src.Deps = fetches
	add := func(ch *chartv2.Chart) error {
		targets := map[string]*chartv2.Chart{"": ch}
		for _, s := range ch.Dependencies() {
			targets[s.Name()] = s
		}
		for _, b := range all {
			for _, a := range b.archives {
				dep, err := loader.LoadArchive(bytes.NewReader(a))
				if err != nil {
					return err
				}
				targets[b.sub].AddDependency(dep)
			}
		}
		return nil
	}
	if err := add(src.Chart); err != nil {
		return err
	}
	load := src.Load
	src.Load = func() (*chartv2.Chart, error) {
		ch, err := load()
		if err != nil {
			return nil, err
		}
		return ch, add(ch)
	}
	return nil
}

// depTarget is a chart whose missing dependencies are built: the chart
// itself (sub "") or a subchart it vendors as a directory.
type depTarget struct {
	ch        *chartv2.Chart
	what, sub string
}

// dependencyTargets are src's chart and those of its subcharts that have
// a lock (or every one, with dependencyUpdate); a subchart without one
// renders as it is, as helm does (a disabled dependency needs nothing).
func dependencyTargets(req chartRequest, src *Source) []depTarget {
	out := []depTarget{{src.Chart, src.What, ""}}
	for _, ch := range src.Chart.Dependencies() {
		if ch.Lock == nil && !req.dependencyUpdate {
			continue
		}
		out = append(out, depTarget{ch, src.What + " (its subchart " + ch.Name() + ")", ch.Name()})
	}
	return out
}

// fetchMissing fetches the dependencies src.Chart declares and does not
// vendor: their archives, in the order of the plan.
func (e *Fetcher) fetchMissing(ctx context.Context, req chartRequest, src *Source) ([]DependencyFetch, [][]byte, error) {
	fetches, key, err := dependencyPlan(req, src)
	if err != nil || len(fetches) == 0 {
		return nil, nil, err
	}
	dir := depCacheDir()
	var archives [][]byte
	for i, f := range fetches {
		data, err := e.fetchDependency(ctx, req, f, key, dir)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, fmt.Errorf("%s: dependency %s %s from %s: %w", src.What, f.Name, f.Version, redactURL(f.Repository), ctx.Err())
			}
			// A repository that cannot be reached is not the cluster: as a
			// transport error it read "cannot reach the API server"
			// (kube.Explain) and ended the whole plan.
			return nil, nil, &kube.ElsewhereError{Err: fmt.Errorf("%s: dependency %s %s from %s: %w", src.What, f.Name, f.Version, redactURL(f.Repository), err)}
		}
		sub, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: dependency %s %s from %s is not a valid chart archive: %w", src.What, f.Name, f.Version, redactURL(f.Repository), err)
		}
		if sub.Name() != f.Name || (key != "" && sub.Metadata.Version != f.Version) {
			return nil, nil, fmt.Errorf("%s: dependency %s %s from %s is chart %s %s", src.What, f.Name, f.Version, redactURL(f.Repository), sub.Name(), sub.Metadata.Version)
		}
		fetches[i].Version = sub.Metadata.Version
		archives = append(archives, data)
	}
	return fetches, archives, nil
}

// fetchDependency returns one dependency's archive: from the cache, or
// downloaded (and then cached when locked). own is the chart that depends
// on it.
func (e *Fetcher) fetchDependency(ctx context.Context, own chartRequest, f DependencyFetch, key, dir string) ([]byte, error) {
	dep := &chartv2.Dependency{Name: f.Name, Version: f.Version, Repository: f.Repository}
	if f.Cached {
		if data, err := os.ReadFile(cachePath(dir, key, dep)); err == nil {
			return data, nil
		}
	}
	repoURL := f.Repository
	var got *Source
	var err error
	switch {
	case strings.HasPrefix(repoURL, "oci://"):
		got, err = e.ociChart(ctx, chartRequest{chart: strings.TrimSuffix(repoURL, "/") + "/" + f.Name, version: f.Version, auth: own.sameHostAuth(repoURL)})
	case strings.HasPrefix(repoURL, "http://") || strings.HasPrefix(repoURL, "https://"):
		got, err = e.repoChart(ctx, chartRequest{chart: f.Name, repo: repoURL, version: f.Version, auth: own.sameHostAuth(repoURL)})
	case spec.IsGitRepo(repoURL):
		return nil, fmt.Errorf("khook builds dependencies from HTTP repositories and OCI registries only: vendor a git+ dependency in charts/ (helm dependency build with helm-git)")
	case strings.HasPrefix(repoURL, "file://"):
		return nil, fmt.Errorf("khook builds dependencies from HTTP repositories and OCI registries only: vendor a file:// dependency in charts/ (helm dependency build)")
	case repoURL == "":
		return nil, fmt.Errorf("it has no repository: vendor it in charts/ or add its repository URL to Chart.yaml")
	default:
		return nil, fmt.Errorf("repository %s is a name from helm repo add, which khook does not read: write the repository's URL in Chart.yaml (and run helm dependency update)", repoURL)
	}
	if err != nil {
		return nil, err
	}
	if key != "" && dir != "" {
		p := cachePath(dir, key, dep)
		if err := writeAtomic(p, got.Archive); err != nil {
			return nil, fmt.Errorf("cannot cache it in %s: %w", filepath.Dir(p), err)
		}
	}
	return got.Archive, nil
}

// sameHostAuth is the step's auth: block for a dependency served by the
// host the step's own chart comes from; other hosts get none (credentials
// in the repository URL's userinfo still apply).
func (r chartRequest) sameHostAuth(repoURL string) *credentials {
	if r.auth == nil {
		return nil
	}
	own := r.repo
	if own == "" {
		own = r.chart
	}
	a, err1 := url.Parse(own)
	b, err2 := url.Parse(repoURL)
	if err1 != nil || err2 != nil || a.Host == "" || a.Host != b.Host {
		return nil
	}
	return r.auth
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// redactURL drops userinfo from a repository URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// DependenciesNote is what a plan adds to a step's reason for the
// dependencies its chart needs built.
func DependenciesNote(deps []DependencyFetch) string {
	if len(deps) == 0 {
		return ""
	}
	list := make([]string, len(deps))
	for i, d := range deps {
		list[i] = d.String()
	}
	return "; builds chart dependencies " + strings.Join(list, ", ")
}

// OfflineDependencies are the dependencies a local chart needs built, read
// from its Chart.yaml and Chart.lock and the cache, with no cluster and no
// network (khook plan --offline); nil for other charts or when the chart
// cannot be read (apply says why).
func OfflineDependencies(baseDir string, h *spec.Helm) []DependencyFetch {
	if h == nil || h.ChartKind() != spec.ChartLocal {
		return nil
	}
	p := h.Chart
	if !filepath.IsAbs(p) {
		p = filepath.Join(baseDir, p)
	}
	ch, err := loader.Load(p)
	if err != nil {
		return nil
	}
	req := chartRequest{chart: h.Chart, dependencyUpdate: h.DependencyUpdate}
	var all []DependencyFetch
	for _, tg := range dependencyTargets(req, &Source{Chart: ch, What: "chart " + h.Chart}) {
		deps, _, err := dependencyPlan(req, &Source{Chart: tg.ch, What: tg.what})
		if err != nil {
			return nil
		}
		all = append(all, deps...)
	}
	return all
}
