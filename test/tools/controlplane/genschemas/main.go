// Command genschemas writes the OpenAPI schemas khook validates manifests
// against offline (runner/kube/apischema/schemas): the OpenAPI v3 documents the
// pinned k8s.io/kubernetes module ships (api/openapi-spec/v3), cut to what
// validation reads (types, properties, required, items, additional
// properties, the x-kubernetes extensions that change what a value may be)
// and merged into one gzipped document; enum values come from the Go
// definitions the documents were generated from, since the published
// documents carry them only in prose. Run `go generate ./runner/kube` after
// raising k8s.io/kubernetes in this module.
package main

import (
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/generated/openapi"
)

// Schema is the cut-down schema; runner/kube's openAPISchema reads it.
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Ref                  string             `json:"$ref,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	IntOrString          bool               `json:"x-kubernetes-int-or-string,omitempty"`
	PreserveUnknown      bool               `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	Embedded             bool               `json:"x-kubernetes-embedded-resource,omitempty"`
}

// Document is the file runner/kube embeds.
type Document struct {
	Kubernetes string             `json:"kubernetes"`
	Kinds      map[string]string  `json:"kinds"` // "apps/v1, Kind=Deployment" → schema name
	Schemas    map[string]*Schema `json:"schemas"`
}

func main() {
	out := flag.String("o", "", "the gzipped document to write")
	flag.Parse()
	dir, version, err := kubernetesModule()
	if err != nil {
		fail(err)
	}
	enums := goEnums()
	doc := Document{Kubernetes: version, Kinds: map[string]string{}, Schemas: map[string]*Schema{}}
	files, _ := filepath.Glob(filepath.Join(dir, "api", "openapi-spec", "v3", "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fail(err)
		}
		var o struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &o); err != nil {
			fail(fmt.Errorf("%s: %w", f, err))
		}
		for name, raw := range o.Components.Schemas {
			var s spec.Schema
			if err := json.Unmarshal(raw, &s); err != nil {
				fail(fmt.Errorf("%s %s: %w", f, name, err))
			}
			doc.Schemas[name] = cut(&s, enums[name])
			if gvks, ok := s.Extensions["x-kubernetes-group-version-kind"].([]any); ok {
				for _, g := range gvks {
					m, _ := g.(map[string]any)
					gv := fmt.Sprint(m["version"])
					if grp := fmt.Sprint(m["group"]); grp != "" {
						gv = grp + "/" + gv
					}
					doc.Kinds[gv+", Kind="+fmt.Sprint(m["kind"])] = name
				}
			}
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err := json.NewEncoder(zw).Encode(doc); err != nil {
		fail(err)
	}
	if err := zw.Close(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
	fmt.Printf("%s: Kubernetes %s, %d kinds, %d schemas\n", *out, version, len(doc.Kinds), len(doc.Schemas))
}

// cut keeps what validation reads of s; enums are the Go definition's, by
// property name.
func cut(s *spec.Schema, enums map[string][]any) *Schema {
	out := &Schema{Format: s.Format, Required: s.Required, Enum: s.Enum}
	if len(s.Type) == 1 {
		out.Type = s.Type[0]
	}
	if r := s.Ref.String(); r != "" {
		out.Ref = strings.TrimPrefix(r, "#/components/schemas/")
	}
	// A field with a default or a description of its own is allOf: [$ref].
	if len(s.AllOf) == 1 && s.AllOf[0].Ref.String() != "" {
		out.Ref = strings.TrimPrefix(s.AllOf[0].Ref.String(), "#/components/schemas/")
	}
	if len(s.Properties) > 0 {
		out.Properties = map[string]*Schema{}
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p := s.Properties[n]
			ps := cut(&p, nil)
			if e := enums[n]; len(e) > 0 && ps.Ref == "" {
				ps.Enum = e
			}
			out.Properties[n] = ps
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		out.Items = cut(s.Items.Schema, nil)
	}
	if s.AdditionalProperties != nil {
		if s.AdditionalProperties.Schema != nil {
			out.AdditionalProperties = cut(s.AdditionalProperties.Schema, nil)
		} else if s.AdditionalProperties.Allows {
			out.AdditionalProperties = &Schema{}
		}
	}
	// IntOrString and Quantity: oneOf integer|string, string|number.
	if len(s.OneOf) > 0 && out.Type == "" {
		out.IntOrString = true
	}
	out.IntOrString = out.IntOrString || s.Format == "int-or-string" || s.Extensions["x-kubernetes-int-or-string"] == true
	out.PreserveUnknown = s.Extensions["x-kubernetes-preserve-unknown-fields"] == true
	out.Embedded = s.Extensions["x-kubernetes-embedded-resource"] == true
	return out
}

// goEnums reads the enum values of every definition's properties from the
// Go definitions (schema name → property → values).
func goEnums() map[string]map[string][]any {
	defs := openapi.GetOpenAPIDefinitions(func(path string) spec.Ref { return spec.MustCreateRef(path) })
	out := map[string]map[string][]any{}
	for name, d := range defs {
		collect(out, restFriendly(name), d)
	}
	return out
}

func collect(out map[string]map[string][]any, name string, d common.OpenAPIDefinition) {
	for p, s := range d.Schema.Properties {
		if len(s.Enum) > 0 {
			if out[name] == nil {
				out[name] = map[string][]any{}
			}
			out[name][p] = s.Enum
		}
	}
}

// restFriendly turns "k8s.io/api/core/v1.Container" into the published
// "io.k8s.api.core.v1.Container" (names already in that form are kept).
func restFriendly(name string) string {
	if !strings.Contains(name, "/") {
		return name
	}
	parts := strings.Split(name, "/")
	host := strings.Split(parts[0], ".")
	for i, j := 0, len(host)-1; i < j; i, j = i+1, j-1 {
		host[i], host[j] = host[j], host[i]
	}
	return strings.Join(append([]string{strings.Join(host, ".")}, parts[1:]...), ".")
}

func kubernetesModule() (dir, version string, err error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "k8s.io/kubernetes").Output()
	if err != nil {
		return "", "", fmt.Errorf("go list -m k8s.io/kubernetes: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return "", "", fmt.Errorf("go list -m k8s.io/kubernetes: %q", out)
	}
	return f[0], strings.TrimPrefix(f[1], "v"), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genschemas:", err)
	os.Exit(1)
}
