package chartsource

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	rel "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/khook/khook/spec"
)

// Target is the release a helm: step manages.
func Target(step *spec.Step) (release, namespace string) {
	release, namespace = step.Helm.Release, step.Helm.Namespace
	if release == "" {
		release = step.Name
	}
	return release, spec.NamespaceOrDefault(namespace)
}

// OneLine joins the lines of a multi-line Helm error (joined wait errors),
// keeping the cause for errors.Is.
func OneLine(err error) error {
	msg := err.Error()
	if !strings.Contains(msg, "\n") {
		return err
	}
	lines := strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return &lineError{msg: strings.Join(lines, "; "), cause: err}
}

type lineError struct {
	msg   string
	cause error
}

func (e *lineError) Error() string { return e.msg }
func (e *lineError) Unwrap() error { return e.cause }

// AsRelease is the release Helm's actions return.
func AsRelease(r any) (*rel.Release, error) {
	switch v := r.(type) {
	case *rel.Release:
		return v, nil
	case rel.Release:
		return &v, nil
	}
	return nil, fmt.Errorf("unexpected Helm release type %T", r)
}

// DecodeManifest reads multi-document YAML into objects, skipping empty
// documents and expanding List kinds.
func DecodeManifest(manifest string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(manifest)), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if strings.HasSuffix(u.GetKind(), "List") && u.Object["items"] != nil {
			list, err := u.ToList()
			if err != nil {
				return nil, err
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("a document has no kind or metadata.name")
		}
		out = append(out, u)
	}
}

// RenderedDoc is the output of one template in a release manifest.
type RenderedDoc struct{ Source, Text string }

// SplitBySource groups a release manifest ("---\n# Source: x\n...") by
// template, each as `helm template --show-only` prints it, so a line
// number in it is one the user can look up.
//
// Each document's text is built in a strings.Builder: appending line by line
// to a string copied the whole document per line, minutes of CPU for a chart
// whose CRD templates are megabytes (kyverno's, 3 MB, took 50 s per render).
func SplitBySource(manifest string) []RenderedDoc {
	var docs []RenderedDoc
	var texts []*strings.Builder
	index := map[string]int{}
	lines := strings.SplitAfter(manifest, "\n")
	cur := -1
	for i, l := range lines {
		if strings.TrimRight(l, "\n") == "---" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "# Source: ") {
			src := strings.TrimSpace(strings.TrimPrefix(lines[i+1], "# Source: "))
			n, ok := index[src]
			if !ok {
				n = len(docs)
				index[src] = n
				docs = append(docs, RenderedDoc{Source: src})
				texts = append(texts, &strings.Builder{})
			}
			cur = n
		}
		if cur < 0 {
			if len(docs) == 0 {
				docs = append(docs, RenderedDoc{Source: "manifest"})
				texts = append(texts, &strings.Builder{})
			}
			cur = 0
		}
		texts[cur].WriteString(l)
	}
	for i := range docs {
		docs[i].Text = texts[i].String()
	}
	return docs
}

// RunsOnInstallOrUpgrade: the hook runs on install or upgrade.
func RunsOnInstallOrUpgrade(h *rel.Hook) bool {
	for _, ev := range h.Events {
		switch ev {
		case rel.HookPreInstall, rel.HookPostInstall, rel.HookPreUpgrade, rel.HookPostUpgrade:
			return true
		}
	}
	return false
}
