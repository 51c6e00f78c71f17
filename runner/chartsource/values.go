package chartsource

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/getter"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/sops"
	"github.com/khook/khook/spec"
)

// ValuesLoader reads a helm step's values. It is the one place values are
// read and merged: apply's install and upgrade, plan's dry run, the
// convergence check (Helm drift) and the saved plan's release digests all
// take their values from Load. Each kind of source is one method returning
// the source's map; a new kind (an encrypted file, a reference to a cluster
// Secret) is one more method and one more case in Load.
type ValuesLoader struct {
	baseDir  string
	clients  *kube.Clients // secretKeyRef, configMapKeyRef
	redactor *redact.Redactor
	// getter is the HTTP client options for url: sources: the run's
	// transport (its CA), with a timeout bounded by the step's deadline.
	getter func(ctx context.Context) []getter.Option
	// split strips a URL's userinfo, registering the password.
	split func(raw string) (clean, user, pass string, err error)
}

// Values is the fetcher's values loader.
func (e *Fetcher) Values() *ValuesLoader {
	return &ValuesLoader{baseDir: e.baseDir, clients: e.clients, redactor: e.redactor, getter: e.getterOptions,
		split: func(raw string) (string, string, string, error) { return e.splitCredentials(raw, nil) }}
}

// Load merges valuesFrom (in order) and then values, like helm -f a -f b
// --set: maps merge deeply, later sources override earlier ones. The result
// is in JSON form (numbers float64), the form Helm stores as release config.
func (l *ValuesLoader) Load(ctx context.Context, h *spec.Helm) (map[string]any, error) {
	out := map[string]any{}
	for i, src := range h.ValuesFrom {
		var (
			m   map[string]any
			err error
		)
		switch {
		case src.File != "" && src.Path != "":
			m, err = l.FilePath(i, src.File, src.Path)
		case src.File != "":
			m, err = l.File(i, src.File)
		case src.URL != "":
			m, err = l.URL(ctx, i, src.URL)
		case src.SecretKeyRef != nil:
			m, err = l.KeyRef(ctx, i, "Secret", src.SecretKeyRef, h.Namespace)
		case src.ConfigMapKeyRef != nil:
			m, err = l.KeyRef(ctx, i, "ConfigMap", src.ConfigMapKeyRef, h.Namespace)
		default:
			err = fmt.Errorf("valuesFrom[%d] has none of file:, url:, secretKeyRef:, configMapKeyRef:", i)
		}
		if err != nil {
			return nil, err
		}
		out = loader.MergeMaps(out, m)
	}
	if len(h.Values) > 0 {
		inline, err := l.Inline(h.Values)
		if err != nil {
			return nil, err
		}
		out = loader.MergeMaps(out, inline)
	}
	return jsonForm(out)
}

// File reads valuesFrom[i]'s file, relative to the spec's directory.
func (l *ValuesLoader) File(i int, file string) (map[string]any, error) {
	what := fmt.Sprintf("valuesFrom[%d] file %s", i, file)
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(l.baseDir, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s (looked at %s): %w", what, p, unwrapPathError(err))
	}
	return l.parse(what, data)
}

// FilePath reads the values at a dotted path inside valuesFrom[i]'s file
// (a Flux HelmRelease's spec.values), so edits to that file keep flowing.
func (l *ValuesLoader) FilePath(i int, file, path string) (map[string]any, error) {
	whole, err := l.File(i, file)
	if err != nil {
		return nil, err
	}
	var cur any = whole
	for _, key := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("valuesFrom[%d] file %s has no map at %s (path %s)", i, file, key, path)
		}
		if cur, ok = m[key]; !ok {
			return nil, fmt.Errorf("valuesFrom[%d] file %s has no %s (path %s)", i, file, key, path)
		}
	}
	if cur == nil {
		return map[string]any{}, nil
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("valuesFrom[%d] file %s: %s is not a map of values", i, file, path)
	}
	return m, nil
}

// URL fetches valuesFrom[i]'s url with the run's HTTP client; userinfo in
// the URL is sent as basic auth and never shown.
func (l *ValuesLoader) URL(ctx context.Context, i int, raw string) (map[string]any, error) {
	clean, user, pass, err := l.split(raw)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("valuesFrom[%d] url %s", i, clean)
	g, err := getter.NewHTTPGetter(l.getter(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("cannot set up the HTTP client for %s: %w", what, err)
	}
	buf, err := g.Get(clean, getter.WithURL(clean), getter.WithBasicAuth(user, pass))
	if err != nil {
		return nil, fmt.Errorf("cannot fetch %s: %w%s", what, err, authHint(err, user != ""))
	}
	return l.parse(what, buf.Bytes())
}

// Inline is the step's values: block in JSON form.
func (l *ValuesLoader) Inline(v map[string]any) (map[string]any, error) {
	out, err := jsonForm(v)
	if err != nil {
		return nil, fmt.Errorf("values: cannot be encoded: %w", err)
	}
	return out, nil
}

// parse reads a source's bytes as a YAML map of values; a sops-encrypted
// source is decrypted in memory first, its values registered with the
// redactor.
func (l *ValuesLoader) parse(what string, data []byte) (map[string]any, error) {
	data, err := sops.Decrypt(what, data, l.redactor)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s is not a YAML map of values: %s", what, l.redactor.String(err.Error()))
	}
	return m, nil
}

// jsonForm round-trips values through JSON so that values from any source
// compare equal with what Helm stored.
func jsonForm(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
