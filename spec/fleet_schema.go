package spec

import (
	"bytes"
	"encoding/json"
)

// FleetSchemaID is the canonical URL of the fleet file's JSON Schema.
const FleetSchemaID = "https://khook.io/schema/v1/fleet.json"

// FleetSchema returns the JSON Schema (draft 2020-12) of a fleet file
// (kind: Fleet), deterministic and indented like Schema();
// docs/schema/v1/fleet.json is its output. A fleet file is not
// substituted, so its types are exact.
func FleetSchema() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(topLevel(fleetSchemaDoc())); err != nil {
		panic(err) // the document is static; this cannot fail
	}
	return buf.Bytes()
}

func fleetSchemaDoc() obj {
	files := func(d string) obj {
		return obj{"type": "array", "items": obj{"type": "string", "minLength": 1}, "description": d}
	}
	stringMap := func(d, keyPattern string) obj {
		o := obj{"type": "object", "additionalProperties": obj{"type": "string"}, "description": d}
		if keyPattern != "" {
			o["propertyNames"] = obj{"pattern": keyPattern}
		}
		return o
	}
	return obj{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  FleetSchemaID,
		"title":                "khook fleet",
		"description":          "A khook fleet (apiVersion khook.io/v1, kind Fleet): one spec run across many clusters, in waves.",
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"apiVersion", "kind", "metadata", "files", "clusters"},
		"patternProperties":    obj{},
		"properties": obj{
			"apiVersion": obj{"const": APIVersion},
			"kind":       obj{"const": FleetKind},
			"metadata": object(obj{
				"name": obj{"type": "string", "pattern": subdomainPattern, "description": "Fleet name (RFC 1123)"},
			}, "name"),
			"files":    files("The spec every cluster runs: base, then overlays; relative to the fleet file"),
			"policies": files("Policy files (--policy) every cluster's plan and apply check; relative to the fleet file"),
			"clusters": obj{"type": "array", "minItems": 1, "items": defRef("cluster")},
			"rollout": desc(object(obj{
				"maxFailures": obj{"type": "integer", "minimum": 0, "description": "Per wave: more failed clusters than this halt the rollout (default 0)"},
			}), "How waves halt"),
		},
		"$defs": obj{
			"cluster": object(obj{
				"name":             obj{"type": "string", "pattern": labelPattern, "maxLength": 63, "description": "Cluster name (RFC 1123 label): the matrix value, comment row and identifier"},
				"wave":             obj{"type": "integer", "minimum": 1, "description": "Waves run in order (default 1)"},
				"labels":           stringMap("Labels for --selector", ""),
				"context":          obj{"type": "string", "description": "A context of the run's kubeconfig (local runs)"},
				"kubeconfigSecret": obj{"type": "string", "pattern": `^[-._a-zA-Z][-._a-zA-Z0-9]*$`, "description": "The CI secret (an environment variable when khook runs) holding this cluster's kubeconfig"},
				"files":            files("Overlays merged after the fleet's files"),
				"varFiles":         files("Variable files (flat NAME: value maps), in order"),
				"vars":             stringMap("Variables, as --set NAME=value", `^[A-Za-z_][A-Za-z0-9_]*$`),
				"policies":         files("Policy files (--policy) this cluster's plan and apply check, after the fleet's"),
			}, "name"),
		},
	}
}
