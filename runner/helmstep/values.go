package helmstep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/getter"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/spec"
)

// values merges valuesFrom (in order) and then values, like helm -f a -f b
// --set: maps merge deeply, later sources override earlier ones. The result
// is in JSON form (numbers float64), the form Helm stores as release config.
func (e *Executor) values(ctx context.Context, h *spec.Helm) (map[string]any, error) {
	out := map[string]any{}
	for i, src := range h.ValuesFrom {
		var (
			data []byte
			what string
			err  error
		)
		switch {
		case src.File != "":
			what = fmt.Sprintf("valuesFrom[%d] file %s", i, src.File)
			p := src.File
			if !filepath.IsAbs(p) {
				p = filepath.Join(e.baseDir, p)
			}
			data, err = os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("cannot read %s (looked at %s): %w", what, p, unwrapPathError(err))
			}
		case src.URL != "":
			data, what, err = e.fetchValues(ctx, i, src.URL)
			if err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("valuesFrom[%d] has neither file: nor url:", i)
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("%s is not a YAML map of values: %s", what, e.redactor.String(err.Error()))
		}
		out = loader.MergeMaps(out, m)
	}
	if len(h.Values) > 0 {
		inline, err := jsonForm(h.Values)
		if err != nil {
			return nil, fmt.Errorf("values: cannot be encoded: %w", err)
		}
		out = loader.MergeMaps(out, inline)
	}
	return jsonForm(out)
}

func (e *Executor) fetchValues(ctx context.Context, i int, raw string) ([]byte, string, error) {
	clean, user, pass, err := e.splitCredentials(raw, nil)
	if err != nil {
		return nil, "", err
	}
	what := fmt.Sprintf("valuesFrom[%d] url %s", i, clean)
	g, err := getter.NewHTTPGetter(e.getterOptions(ctx)...)
	if err != nil {
		return nil, "", fmt.Errorf("cannot set up the HTTP client for %s: %w", what, err)
	}
	buf, err := g.Get(clean, getter.WithURL(clean), getter.WithBasicAuth(user, pass))
	if err != nil {
		return nil, "", fmt.Errorf("cannot fetch %s: %w%s", what, err, authHint(err, user != ""))
	}
	return buf.Bytes(), what, nil
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
