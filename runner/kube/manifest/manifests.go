// Package manifest loads the objects a spec names — inline, file, URL,
// kustomize and sops sources; multi-document YAML, List kinds expanded —
// and remembers where each was written, so a field the API server refuses
// is reported at its FILE:LINE (SourcePos, FieldPos, RememberRendered).
// It holds no client: validate, plan --offline and import use it without a
// cluster; mapping objects to resources is runner/kube's.
//
// May import: of khook only spec, redact and sops; no client-go but its
// jsonpath parser (layout_test).
package manifest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/sops"
	"github.com/khook/khook/spec"
)

// Limits of url: manifest sources.
const (
	URLTimeout  = 30 * time.Second
	URLMaxBytes = 16 << 20
)

// LoadManifests reads every source in order and returns its objects in
// document order. Relative file: and kustomize: paths resolve against
// baseDir. Namespaces are not defaulted here (that needs the RESTMapper:
// see Clients.MapObject). A sops-encrypted file (on its own or inside a
// kustomization) is decrypted in memory, its values registered with r; with
// no redactor (readers that need only kinds and names) its values stay
// encrypted.
func LoadManifests(ctx context.Context, baseDir string, sources []spec.Source, r *redact.Redactor) ([]*unstructured.Unstructured, error) {
	var all []*unstructured.Unstructured
	for i, src := range sources {
		data, from, err := readSource(ctx, baseDir, src, r)
		if err != nil {
			return nil, fmt.Errorf("manifests[%d]: %w", i, err)
		}
		objs, err := DecodeManifests(data)
		if err != nil {
			return nil, fmt.Errorf("manifests[%d] (%s): %w", i, from, err)
		}
		switch {
		case src.File != "":
			rememberOrigin(objs, &origin{file: resolve(baseDir, src.File), text: data})
		case src.Inline != "" && src.At != nil:
			rememberOrigin(objs, &origin{at: src.At, text: data})
		}
		all = append(all, objs...)
	}
	return all, nil
}

func readSource(ctx context.Context, baseDir string, src spec.Source, r *redact.Redactor) (data []byte, origin string, err error) {
	switch {
	case src.Inline != "":
		return []byte(src.Inline), "inline", nil
	case src.File != "":
		path := resolve(baseDir, src.File)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("cannot read manifest file %s: %w", src.File, unwrapPathError(err))
		}
		data, err = openManifest("manifest file "+src.File, data, r)
		return data, "file " + src.File, err
	case src.URL != "":
		shown := "url " + redact.StripURLCredentials(src.URL)
		data, err := fetchURL(ctx, src.URL)
		if err == nil {
			data, err = openManifest("manifest "+shown, data, r)
		}
		return data, shown, err
	case src.Kustomize != "":
		data, err := RenderKustomization(resolve(baseDir, src.Kustomize), r)
		if err != nil {
			return nil, "", fmt.Errorf("kustomize %s: %w", src.Kustomize, err)
		}
		return data, "kustomize " + src.Kustomize, nil
	}
	return nil, "", errors.New("the source sets none of inline, file, url, kustomize")
}

// openManifest decrypts a sops-encrypted manifest in memory, registering its
// values with r; with no redactor it returns the encrypted values without
// the sops metadata.
func openManifest(what string, data []byte, r *redact.Redactor) ([]byte, error) {
	if r == nil {
		out, _, err := sops.Check(what, data)
		return out, err
	}
	return sops.Decrypt(what, data, r)
}

func resolve(baseDir, p string) string {
	if filepath.IsAbs(p) || baseDir == "" {
		return p
	}
	return filepath.Join(baseDir, p)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fetchURL downloads an http(s) manifest with a timeout and a size limit;
// its errors never show the URL's credentials.
func fetchURL(ctx context.Context, rawURL string) ([]byte, error) {
	shown := redact.StripURLCredentials(rawURL)
	if !strings.HasPrefix(rawURL, "http://") && !strings.HasPrefix(rawURL, "https://") {
		return nil, fmt.Errorf("url %s: only http:// and https:// manifest URLs are supported", shown)
	}
	ctx, cancel := context.WithTimeout(ctx, URLTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("url %s is not a valid URL", shown)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var reason error = err
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			reason = ue.Unwrap()
		}
		return nil, fmt.Errorf("cannot download %s: %s", shown, redact.StripURLCredentials(reason.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("cannot download %s: the server answered %s", shown, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, URLMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot download %s: %s", shown, redact.StripURLCredentials(err.Error()))
	}
	if len(data) > URLMaxBytes {
		return nil, fmt.Errorf("cannot download %s: larger than the %d MiB limit for manifest URLs", shown, URLMaxBytes>>20)
	}
	return data, nil
}

// DecodeManifests splits multi-document YAML (or JSON) into objects,
// skipping empty documents and expanding List kinds.
func DecodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: cannot read YAML: %v", doc, err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d: invalid YAML: %v", doc, err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
			continue
		}
		objs, err := decodeObject(js)
		if err != nil {
			return nil, fmt.Errorf("document %d: %v", doc, err)
		}
		out = append(out, objs...)
	}
}

func decodeObject(js []byte) ([]*unstructured.Unstructured, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(js), []byte("{")) {
		return nil, errors.New("is not a mapping: every document must be a Kubernetes object with apiVersion and kind")
	}
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, nil)
	if runtime.IsMissingKind(err) || runtime.IsMissingVersion(err) {
		// apimachinery's error quotes the whole document: a values file's
		// secrets with it (trial 46s67s's D1, an API key in the import's header)
		return nil, errors.New("is not a Kubernetes object: apiVersion and kind are required (a helm values file?)")
	}
	if err != nil {
		return nil, fmt.Errorf("is not a Kubernetes object: %v", err)
	}
	var objs []*unstructured.Unstructured
	switch o := obj.(type) {
	case *unstructured.UnstructuredList:
		for i := range o.Items {
			objs = append(objs, &o.Items[i])
		}
	case *unstructured.Unstructured:
		objs = append(objs, o)
	default:
		return nil, fmt.Errorf("decoded to an unexpected %T", obj)
	}
	for _, o := range objs {
		if o.GetAPIVersion() == "" || o.GetKind() == "" {
			return nil, errors.New("is not a Kubernetes object: apiVersion and kind are required")
		}
		if o.GetName() == "" {
			return nil, fmt.Errorf("%s %s has no metadata.name: apply needs a name (generateName is not supported)", o.GetAPIVersion(), o.GetKind())
		}
	}
	return objs, nil
}
