package spec

import (
	"bytes"
	"encoding/json"
	"strings"
)

// SchemaID is the canonical URL of the v1 JSON Schema.
const SchemaID = "https://khook.io/schema/v1/khook.json"

// Schema returns the JSON Schema (draft 2020-12) of the DSL: deterministic,
// indented, with a trailing newline. docs/schema/v1/khook.json is its output.
//
// Substitution happens before parsing, so a loaded spec has real types; an
// editor sees the raw text, so booleans and integers also accept a "${...}"
// string, and constrained strings accept any text holding a "${".
func Schema() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(topLevel(schemaDoc())); err != nil {
		panic(err) // the document is static; this cannot fail
	}
	return buf.Bytes()
}

// topLevelOrder puts the identifying keys first for readers; nested maps
// are sorted by encoding/json, which keeps the output deterministic.
var topLevelOrder = []string{"$schema", "$id", "title", "description", "type", "required", "properties", "patternProperties", "additionalProperties", "$defs"}

// orderedDoc marshals a map's keys in topLevelOrder.
type orderedDoc obj

func topLevel(doc obj) orderedDoc { return orderedDoc(doc) }

func (d orderedDoc) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range topLevelOrder {
		v, ok := d[k]
		if !ok {
			panic("schema: top-level key " + k + " missing")
		}
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		var vb bytes.Buffer
		enc := json.NewEncoder(&vb)
		enc.SetEscapeHTML(false) // descriptions say <Name>, not \u003cName\u003e
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(bytes.TrimSuffix(vb.Bytes(), []byte("\n")))
	}
	if len(d) != len(topLevelOrder) {
		panic("schema: a top-level key is missing from topLevelOrder")
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type obj = map[string]any

func defRef(name string) obj { return obj{"$ref": "#/$defs/" + name} }

func desc(s obj, d string) obj { s["description"] = d; return s }

// str is a string; with a pattern, text holding a ${ reference passes too.
func str(pattern, description string) obj {
	s := obj{"type": "string"}
	if pattern != "" {
		s = obj{"anyOf": []any{obj{"type": "string", "pattern": pattern}, defRef("templated")}}
	}
	if description != "" {
		s["description"] = description
	}
	return s
}

func enum(description string, values ...string) obj {
	return obj{"anyOf": []any{obj{"enum": values}, defRef("templated")}, "description": description}
}

// object is a closed object: unknown fields are errors, as in the loader.
func object(props obj, required ...string) obj {
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// exactlyOne requires exactly one of the given keys.
func exactlyOne(keys ...string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = obj{"required": []string{k}}
	}
	return out
}

const (
	labelPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// labelKeyPattern and labelValuePattern are Kubernetes' label syntax.
	labelKeyPattern   = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	labelValuePattern = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	subdomainPattern  = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	durationPattern   = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	resourcePattern   = `^[A-Za-z0-9.-]+(/[a-z0-9.-]+)?$`
	objectPattern     = `^[A-Za-z0-9.-]+/[a-z0-9.-]+$`
	// waitForPattern is the wait.for grammar; new forms go here and in waitForms.
	waitForPattern  = `^(delete|ready|condition=[^=\s]+(=.+)?|jsonpath=.+|cel=.+)$`
	applyWaitFor    = `^(ready|condition=[^=\s]+(=.+)?|jsonpath=.+|cel=.+)$`
	httpURLPattern  = `^https?://`
	localPattern    = `^(\.{1,2}|\.{0,2}/.*)$`
	templatePattern = `\$\{`
)

func schemaDoc() obj {
	namespace := str(labelPattern, "Kubernetes namespace (RFC 1123 label)")
	return obj{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  SchemaID,
		"title":                "khook spec",
		"description":          "A khook bootstrap spec (apiVersion khook.io/v1, kind Khook): a DAG of helm/apply/delete/patch/wait/rollout/job steps.",
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"apiVersion", "kind", "metadata", "steps"},
		"patternProperties":    obj{"^x-": obj{"description": "Ignored by khook: a place for YAML anchors"}},
		"properties": obj{
			"apiVersion": obj{"const": APIVersion},
			"kind":       obj{"const": Kind},
			"metadata": object(obj{
				"name": str(subdomainPattern, "Spec name, used in logs and the state record (RFC 1123)"),
			}, "name"),
			"defaults": desc(object(obj{
				"timeout":     desc(defRef("duration"), "Per-step execution timeout (default 5m)"),
				"retries":     desc(defRef("count"), "Retry attempts after a failed try (default 0)"),
				"retryDelay":  desc(defRef("duration"), "Pause between tries (default 10s)"),
				"onError":     defRef("onError"),
				"onImmutable": defRef("onImmutable"),
			}), "Fallbacks for the per-step fields of the same name"),
			"state": desc(object(obj{
				"enabled":   desc(defRef("bool"), "Default true when the block is present"),
				"namespace": namespace,
				"name":      str(subdomainPattern, `Record Secret name (default "khook-state-<metadata.name>")`),
			}), "Journal the run in an in-cluster Secret so re-runs resume"),
			"steps":  obj{"type": "array", "minItems": 1, "items": defRef("step")},
			"vars":   declVarsSchema(),
			"rules":  declRulesSchema(),
			"ignore": desc(defRef("ignore"), "Fields every helm and apply step leaves to other owners"),
			"prune":  pruneSchema("Delete what helm and apply steps put in the cluster once it leaves the spec (default true: CRDs and Namespaces kept); false turns pruning off"),
			"policies": desc(obj{"type": "array", "items": policySchema()},
				"Rules over every planned change (docs/policies.md): a deny fails the plan and refuses apply, a warn is a warning"),
		},
		"$defs": defs(namespace),
	}
}

func defs(namespace obj) obj {
	skipIf := func(t string) obj {
		return obj{"const": skipIfValues[t], "description": "The one skip predicate " + t + " steps accept"}
	}
	nsScope := obj{ // namespace and allNamespaces: true are exclusive
		"if":   obj{"properties": obj{"allNamespaces": obj{"const": true}}, "required": []string{"allNamespaces"}},
		"then": obj{"not": obj{"required": []string{"namespace"}}},
	}
	return obj{
		"templated":   obj{"type": "string", "pattern": templatePattern, "description": "A value written with ${VAR} references, substituted before parsing"},
		"varRef":      obj{"type": "string", "pattern": `^\$\{.*\}$`},
		"bool":        obj{"anyOf": []any{obj{"type": "boolean"}, defRef("varRef")}},
		"count":       obj{"anyOf": []any{obj{"type": "integer", "minimum": 0}, defRef("varRef")}},
		"duration":    str(durationPattern, "Go duration, e.g. 90s, 5m, 1h30m"),
		"onError":     enum("fail stops scheduling new steps; continue marks the step failed and keeps going", OnErrorFail, OnErrorContinue),
		"onImmutable": enum("What a change the API server refuses as immutable does (helm and apply steps): fail (default) fails the step and writes nothing of the object; recreate deletes it (foreground) and creates it again. A Namespace, CRD, PVC or PV is replaced only with the annotation "+OnImmutableAnnotation+": recreate on the object itself", OnImmutableFail, OnImmutableRecreate),
		"step": obj{
			"type":                 "object",
			"additionalProperties": false,
			"required":             []string{"name"},
			"oneOf":                exactlyOne(StepTypes...),
			"properties": obj{
				"name":  str(labelPattern, "Unique step name (RFC 1123 label)"),
				"needs": obj{"type": "array", "items": obj{"type": "string"}, "description": "Steps that must succeed first"},
				"labels": obj{"type": "object", "additionalProperties": obj{"type": "string", "maxLength": 63, "pattern": labelValuePattern},
					"propertyNames": obj{"pattern": labelKeyPattern}, "description": "Labels for --selector (Kubernetes label syntax: tier: infra)"},
				"when":        obj{"type": []string{"string", "boolean"}, "description": `CEL condition over vars, e.g. vars.get("ENV", "dev") == "prod"`},
				"timeout":     defRef("duration"),
				"retries":     defRef("count"),
				"retryDelay":  defRef("duration"),
				"onError":     defRef("onError"),
				"onImmutable": defRef("onImmutable"),
				"helm":        defRef("helm"),
				"apply":       defRef("apply"),
				"delete":      defRef("delete"),
				"patch":       defRef("patch"),
				"wait":        defRef("wait"),
				"rollout":     defRef("rollout"),
				"job":         defRef("job"),
				"ignore":      desc(defRef("ignore"), "Fields this helm or apply step leaves to other owners (after the spec's rules)"),
				"prune":       pruneSchema("This helm or apply step's pruning, over the spec's prune: (false at either level turns it off)"),
				"drift":       enum("fail (default): drift in this step fails a drift run; warn: reported, the run stays green", DriftFail, DriftWarn),
			},
		},
		"ignore": ignoreSchema(),
		"source": desc(merge(object(obj{
			"inline":    obj{"type": "string", "description": "YAML manifests, multi-document allowed"},
			"file":      obj{"type": "string", "description": "Path relative to the spec file"},
			"url":       str(httpURLPattern, "HTTP(S) URL"),
			"kustomize": str(localPattern, "Local kustomization directory (./, ../ or /)"),
		}), obj{"oneOf": exactlyOne("inline", "file", "url", "kustomize")}), "Exactly one of inline, file, url, kustomize"),
		"valuesSource": desc(merge(object(obj{
			"file":            desc(obj{"type": "string"}, "A values file (sops-encrypted or not)"),
			"path":            desc(obj{"type": "string"}, "With file: take the values at this dotted path inside the file (spec.values of a Flux HelmRelease)"),
			"url":             str(httpURLPattern, "HTTP(S) URL"),
			"secretKeyRef":    desc(defRef("valuesRef"), "Values from a key of a cluster Secret (masked everywhere)"),
			"configMapKeyRef": desc(defRef("valuesRef"), "Values from a key of a cluster ConfigMap"),
		}), obj{"oneOf": exactlyOne("file", "url", "secretKeyRef", "configMapKeyRef")}), "Exactly one of file, url, secretKeyRef, configMapKeyRef"),
		"valuesRef": desc(object(obj{
			"name":       str(subdomainPattern, ""),
			"namespace":  str(dnsLabelRE.String(), "Default: the release's namespace"),
			"key":        desc(obj{"type": "string"}, "Default: values.yaml"),
			"optional":   defRef("bool"),
			"targetPath": desc(obj{"type": "string"}, "Set the key's value at this path (helm --set syntax) instead of merging it as a YAML map of values"),
		}, "name"), "A key of a Secret or ConfigMap holding values (Flux's valuesFrom)"),
		"helm": desc(merge(object(withHelmExtras(obj{
			"chart":                obj{"type": "string", "description": "Bare name (with repo:), name:version, oci://ref[:tag|@digest], or a local ./path"},
			"repo":                 str(`^(git\+)?https?://`, "HTTP(S) chart repository URL, or a git repository as helm-git writes it: git+https://host/org/repo@path/to/charts?ref=v1.2.3 (bare-name charts only)"),
			"version":              obj{"type": []string{"string", "number"}, "description": "Exact chart version (quote it: 1.10 is a number to YAML, kept as written)"},
			"auth":                 object(obj{"username": obj{"type": "string"}, "password": obj{"type": "string"}}, "username", "password"),
			"release":              str(subdomainPattern, "Helm release name (default: the step name)"),
			"namespace":            namespace,
			"createNamespace":      defRef("bool"),
			"skipIf":               skipIf(TypeHelm),
			"atomic":               defRef("bool"),
			"wait":                 defRef("bool"),
			"values":               obj{"type": "object", "description": "Inline values, merged over chart defaults"},
			"valuesFrom":           obj{"type": "array", "items": defRef("valuesSource")},
			"takeOwnership":        desc(defRef("bool"), "Adopt existing objects the chart renders that no release owns (kubectl apply, scripts); never another release's"),
			"skipSchemaValidation": desc(defRef("bool"), "Render without checking the values against the chart's values.schema.json (helm --skip-schema-validation)"),
			"crds":                 enum("What to do with the chart's crds/: upgrade (default: create and upgrade them, server-side, after the safety checks), create (create missing ones only, as Helm), skip, or only (apply the chart's CRDs, crds/ and templated, and nothing else: no release, no hooks)", CRDsUpgrade, CRDsCreate, CRDsSkip, CRDsOnly),
			"deleteCRDs":           desc(defRef("bool"), "Let an upgrade delete a CRD the chart no longer renders although custom resources of it exist (they are deleted with it)"),
			"verify":               defRef("verify"),
		}), "chart"), obj{"allOf": chartSourceRules()}), "Install or upgrade a chart release"),
		"verify": verifySchema(),
		"apply": desc(object(obj{
			"manifests":       obj{"type": "array", "minItems": 1, "items": defRef("source")},
			"namespace":       namespace,
			"createNamespace": defRef("bool"),
			"skipIf":          skipIf(TypeApply),
			"serverSide":      defRef("bool"),
			"waitFor":         str(applyWaitFor, "ready, condition=<Name>[=<value>], jsonpath=<expr>[=<value>] or cel=<expr> (a CEL expression over object that yields a bool)"),
		}, "manifests"), "Apply manifests"),
		"delete": desc(merge(object(obj{
			"manifests":      obj{"type": "array", "minItems": 1, "items": defRef("source")},
			"resource":       str(resourcePattern, "Type (pods) or kind/name (daemonset/aws-node)"),
			"release":        str(subdomainPattern, "Helm release to uninstall"),
			"namespace":      namespace,
			"allNamespaces":  defRef("bool"),
			"selector":       obj{"type": "string", "description": "Label selector"},
			"fieldSelector":  obj{"type": "string", "description": "Field selector"},
			"ignoreNotFound": defRef("bool"),
			"deleteCRDs":     desc(defRef("bool"), "Delete a CRD although custom resources of it exist (they are deleted with it); without it such a CRD is kept"),
			"deleteData":     desc(defRef("bool"), "Delete what holds data: a PersistentVolumeClaim, a PersistentVolume, a StatefulSet whose persistentVolumeClaimRetentionPolicy deletes its claims (the data goes); without it such an object is kept"),
		}), obj{
			"oneOf": exactlyOne("manifests", "resource", "release"),
			"dependentSchemas": obj{
				"release":   obj{"properties": obj{"selector": false, "fieldSelector": false, "allNamespaces": false, "deleteCRDs": false, "deleteData": false}},
				"manifests": obj{"properties": obj{"selector": false, "fieldSelector": false, "allNamespaces": false}},
			},
			"allOf": []any{nsScope},
		}), "Remove resources: exactly one of manifests, resource, release"),
		"patch": desc(merge(object(obj{
			"target":    str(objectPattern, "kind/name, e.g. daemonset/aws-node"),
			"namespace": namespace,
			"type":      enum("Patch type (default strategic)", PatchStrategic, PatchMerge, PatchJSON),
			"patch":     obj{"type": []string{"object", "array"}, "description": "A map for strategic/merge, a list of operations for json"},
		}, "target", "patch"), obj{
			"if":   obj{"properties": obj{"type": obj{"const": PatchJSON}}, "required": []string{"type"}},
			"then": obj{"properties": obj{"patch": obj{"type": "array", "minItems": 1, "items": defRef("jsonPatchOp")}}},
			"else": obj{"properties": obj{"patch": obj{"type": "object"}}},
		}), "Modify a resource in place"),
		"jsonPatchOp": obj{
			"type":     "object",
			"required": []string{"op", "path"},
			"properties": obj{
				"op":    obj{"enum": []string{"add", "remove", "replace", "move", "copy", "test"}},
				"path":  obj{"type": "string"},
				"from":  obj{"type": "string"},
				"value": true,
			},
		},
		"wait": desc(merge(object(obj{
			"for":           str(waitForPattern, "ready, condition=<Name>[=<value>], jsonpath=<expr>[=<value>], cel=<expr> (a CEL expression over object that yields a bool), or delete"),
			"on":            str(resourcePattern, "Type (pods) or kind/name (deployment/coredns)"),
			"namespace":     namespace,
			"allNamespaces": defRef("bool"),
			"selector":      obj{"type": "string"},
			"fieldSelector": obj{"type": "string"},
		}, "for", "on"), nsScope), "Block until a condition holds"),
		"rollout": desc(merge(object(obj{
			"restart":   str(objectPattern, "deployment/x, daemonset/x or statefulset/x"),
			"status":    str(objectPattern, "deployment/x, daemonset/x or statefulset/x"),
			"namespace": namespace,
		}, "namespace"), obj{"oneOf": exactlyOne("restart", "status")}), "Exactly one of restart, status"),
		"job": desc(object(withJobSources(obj{
			"image":           obj{"type": "string"},
			"command":         obj{"type": "array", "items": obj{"type": "string"}},
			"args":            obj{"type": "array", "items": obj{"type": "string"}},
			"env":             obj{"type": "object", "additionalProperties": obj{"type": []string{"string", "number", "boolean", "null"}}},
			"namespace":       namespace,
			"createNamespace": defRef("bool"),
			"serviceAccount":  str(subdomainPattern, ""),
			"skipIf":          skipIf(TypeJob),
		}), "image"), "Run a container to completion"),
	}
}

// chartSourceRules encode the chart: shapes: a bare name needs repo:, an
// inline version excludes version:, oci:// excludes repo:, a local path
// excludes repo:, version: and auth:.
func chartSourceRules() []any {
	when := func(pattern string, then obj) obj {
		return obj{
			"if":   obj{"properties": obj{"chart": obj{"pattern": pattern}}, "required": []string{"chart"}},
			"then": then,
		}
	}
	return []any{
		when(`^[A-Za-z0-9][A-Za-z0-9._-]*(:[^/]*)?$`, obj{"required": []string{"repo"}}),
		when(`^[A-Za-z0-9][A-Za-z0-9._-]*:[^/]+$`, obj{"properties": obj{"version": false}}),
		when(`^oci://`, obj{"properties": obj{"repo": false}}),
		when(`^oci://.*(@|/[^/]*:[^/]*$)`, obj{"properties": obj{"version": false}}),
		when(localPattern, obj{"properties": obj{"repo": false, "version": false, "auth": false}}),
	}
}

func merge(a, b obj) obj {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// policySchema is one policies: rule (policy.go).
func policySchema() obj {
	list := func(d string) obj { return desc(obj{"type": "array", "items": obj{"type": "string"}}, d) }
	rule := object(obj{
		"name":    desc(obj{"type": "string", "minLength": 1}, "How a violation names the rule"),
		"deny":    desc(obj{"type": "string"}, "CEL: true means a violation that fails the plan and refuses apply. Sees object, oldObject (null when absent), action and step"),
		"warn":    desc(obj{"type": "string"}, "CEL: true means a violation reported as a warning"),
		"message": desc(obj{"type": "string"}, "CEL string expression saying why (plain prose is taken as written)"),
		"match": desc(object(obj{
			"kinds":      list("Object kinds the rule sees (Deployment, ...)"),
			"namespaces": list("Namespaces the rule sees"),
			"steps":      list("Step names or step types the rule sees"),
			"actions":    list("Planned actions the rule sees: " + strings.Join(PolicyActions, ", ")),
		}), "Narrows the changes the rule sees; an empty list matches all"),
	}, "name")
	rule["oneOf"] = []any{obj{"required": []string{"deny"}}, obj{"required": []string{"warn"}}}
	return rule
}

// verifySchema is a helm step's verify: block (verify.go).
func verifySchema() obj {
	identity := desc(merge(object(obj{
		"issuer":        desc(obj{"type": "string"}, "OIDC issuer of the signing certificate, e.g. https://token.actions.githubusercontent.com"),
		"subject":       desc(obj{"type": "string"}, "The certificate's identity, exactly (a workflow URL, an e-mail)"),
		"subjectRegExp": desc(obj{"type": "string"}, "A regular expression the certificate's identity matches"),
	}, "issuer"), obj{"oneOf": exactlyOne("subject", "subjectRegExp")}), "Keyless: the identity that signed")
	cosign := desc(merge(object(obj{
		"key":         desc(obj{"type": "string"}, "A PEM public key: the text itself, a file, or ${VAR}"),
		"keys":        obj{"type": "array", "minItems": 1, "items": obj{"type": "string"}, "description": "Several PEM public keys; any one may have signed"},
		"identity":    identity,
		"trustedRoot": desc(obj{"type": "string"}, "A Sigstore trusted_root.json (default: the public-good root shipped in khook)"),
	}), obj{"oneOf": exactlyOne("key", "keys", "identity")}), "Sigstore signatures of an oci:// chart")
	return desc(merge(object(obj{
		"provenance": desc(object(obj{
			"keyring": desc(obj{"type": "string"}, "OpenPGP keyring file (gpg --export, armored or keybox) with the signers' public keys"),
		}, "keyring"), "Helm provenance (.prov): HTTP repositories, the OCI .prov layer, a local .tgz"),
		"cosign": cosign,
	}), obj{"minProperties": 1}), "Signatures the chart must carry, checked before it renders (docs/supply-chain.md)")
}
