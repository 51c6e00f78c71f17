package apischema

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SchemaProblem is one way an object breaks its kind's schema: the field
// (as the API server's strict decoding spells it,
// "spec.template.spec.containers[0].resourcess") and the sentence, which
// names the field.
type SchemaProblem struct {
	Path    string
	Message string
}

// Validate checks obj against its kind's schema: unknown fields (the ones
// strict field validation refuses), values of the wrong type, missing
// required fields and values outside an enum. known is false when the
// schemas have no kind for obj (a CRD neither built in nor applied by the
// spec), which is then not checked.
func (s *Schemas) Validate(obj *unstructured.Unstructured) (problems []SchemaProblem, known bool) {
	root, ok := s.kinds[obj.GroupVersionKind()]
	if !ok || root == nil {
		return nil, false
	}
	w := &walker{defs: s.defs, crd: root.crd}
	w.value(root, obj.Object, "", 0)
	return w.problems, true
}

type walker struct {
	crd      bool // a CRD's schema: a null needs nullable (or a default)
	defs     map[string]*openAPISchema
	problems []SchemaProblem
}

// maxDepth bounds a walk through recursive schemas (JSONSchemaProps).
const maxDepth = 64

func (w *walker) add(path, format string, args ...any) {
	w.problems = append(w.problems, SchemaProblem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (w *walker) resolve(s *openAPISchema) (*openAPISchema, string) {
	def := ""
	for i := 0; s != nil && s.Ref != "" && i < 8; i++ {
		def = s.Ref
		s = w.defs[s.Ref]
	}
	return s, def
}

// emptyAccepted are the enum fields of built-in kinds where the API server
// takes "" as unset: its defaulting (pkg/apis/*/v1/defaults.go and the
// generated +default ones, `if x == "" { x = … }`), which runs before
// validation, fills them in, or validation reads "" as the default
// (Toleration). A chart that renders `podManagementPolicy: ""` (bitnami
// mysql) installs as OrderedReady (trial 46s69j's D1). Fields held by a
// pointer (Job's completionMode, a Service's internalTrafficPolicy, …)
// are defaulted only when absent: "" there is refused, and checked.
var emptyAccepted = map[string]bool{
	"io.k8s.api.apps.v1.DeploymentStrategy.type":                            true,
	"io.k8s.api.apps.v1.DaemonSetUpdateStrategy.type":                       true,
	"io.k8s.api.apps.v1.StatefulSetSpec.podManagementPolicy":                true,
	"io.k8s.api.apps.v1.StatefulSetUpdateStrategy.type":                     true,
	"io.k8s.api.batch.v1.CronJobSpec.concurrencyPolicy":                     true,
	"io.k8s.api.core.v1.Container.imagePullPolicy":                          true,
	"io.k8s.api.core.v1.Container.terminationMessagePolicy":                 true,
	"io.k8s.api.core.v1.EphemeralContainer.imagePullPolicy":                 true,
	"io.k8s.api.core.v1.EphemeralContainer.terminationMessagePolicy":        true,
	"io.k8s.api.core.v1.ContainerPort.protocol":                             true,
	"io.k8s.api.core.v1.ServicePort.protocol":                               true,
	"io.k8s.api.core.v1.EndpointPort.protocol":                              true,
	"io.k8s.api.core.v1.HTTPGetAction.scheme":                               true,
	"io.k8s.api.core.v1.PodSpec.dnsPolicy":                                  true,
	"io.k8s.api.core.v1.PodSpec.restartPolicy":                              true,
	"io.k8s.api.core.v1.ServiceSpec.type":                                   true,
	"io.k8s.api.core.v1.ServiceSpec.sessionAffinity":                        true,
	"io.k8s.api.core.v1.ServiceSpec.externalTrafficPolicy":                  true,
	"io.k8s.api.core.v1.PersistentVolumeSpec.persistentVolumeReclaimPolicy": true,
	"io.k8s.api.core.v1.Toleration.operator":                                true,
	"io.k8s.api.core.v1.Toleration.effect":                                  true,
}

func (w *walker) value(s *openAPISchema, v any, path string, depth int) {
	if v == nil && s != nil && w.crd && s.Ref == "" && path != "" && !strings.HasPrefix(path, "metadata") && s.Type != "" && !s.Nullable && s.Default == nil {
		// A custom resource's apply refuses it (`Invalid value: "null"`);
		// metadata is ObjectMeta's, where null leaves a field unset.
		w.add(path, "%s must be %s, not null", path, typeName(s.Type))
		return
	}
	s, def := w.resolve(s)
	if s == nil || v == nil || depth > maxDepth {
		return // null leaves a field unset; a schema we lack checks nothing
	}
	combined := len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0
	switch {
	case s.IntOrString:
		if !isString(v) && !isNumber(v) {
			w.add(path, "%s must be an integer or a string, not %s", path, describe(v))
		}
	case s.Type == "object" || (s.Type == "" && (s.Properties != nil || s.AdditionalProperties != nil)):
		m, ok := v.(map[string]any)
		if !ok {
			if s.Type != "" || !combined {
				w.add(path, "%s must be an object, not %s", path, describe(v))
			}
			return
		}
		w.object(s, def, m, path, depth)
	case s.Type == "array":
		l, ok := v.([]any)
		if !ok {
			w.add(path, "%s must be a list, not %s", path, describe(v))
			return
		}
		for i, item := range l {
			w.value(s.Items, item, fmt.Sprintf("%s[%d]", path, i), depth+1)
		}
	case s.Type == "string":
		if !isString(v) {
			w.add(path, "%s must be a string, not %s", path, describe(v))
		}
	case s.Type == "integer":
		if !isInteger(v) {
			w.add(path, "%s must be an integer, not %s", path, describe(v))
		}
	case s.Type == "number":
		if !isNumber(v) {
			w.add(path, "%s must be a number, not %s", path, describe(v))
		}
	case s.Type == "boolean":
		if _, ok := v.(bool); !ok {
			w.add(path, "%s must be true or false, not %s", path, describe(v))
		}
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		w.add(path, "%s is %q, not one of %s", path, fmt.Sprint(v), enumList(s.Enum))
	}
}

func (w *walker) object(s *openAPISchema, def string, m map[string]any, path string, depth int) {
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			w.add(join(path, r), "missing required field %q", join(path, r))
		}
	}
	// Unknown fields are what the API server's strict decoding (built-in
	// kinds) or pruning (CRDs) would refuse: fields of an object whose
	// schema lists its properties and keeps no others.
	closed := len(s.Properties) > 0 && s.AdditionalProperties == nil && !s.PreserveUnknown
	for _, k := range sortedKeys(m) {
		p := join(path, k)
		if ps, ok := s.Properties[k]; ok {
			if m[k] == "" && def != "" && emptyAccepted[def+"."+k] {
				continue
			}
			w.value(ps, m[k], p, depth+1)
			continue
		}
		if s.Embedded && (k == "apiVersion" || k == "kind" || k == "metadata") {
			continue
		}
		switch {
		case s.AdditionalProperties != nil && s.AdditionalProperties.schema != nil:
			w.value(s.AdditionalProperties.schema, m[k], p, depth+1)
		case s.AdditionalProperties != nil && !s.AdditionalProperties.allows:
			w.add(p, "unknown field %q", p)
		case closed:
			w.add(p, "unknown field %q", p)
		}
	}
}

// plainKey is a map key the dotted path spells as is.
var plainKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// join appends a field to a path: "spec.replicas", or a key that is not
// a plain name in brackets ("metadata.labels[app.kubernetes.io/name]"),
// the two spellings FieldPos reads.
func join(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func isString(v any) bool { _, ok := v.(string); return ok }

func isNumber(v any) bool {
	switch v.(type) {
	case int, int32, int64, float32, float64:
		return true
	}
	return false
}

func isInteger(v any) bool {
	switch n := v.(type) {
	case int, int32, int64:
		return true
	case float64:
		return n == float64(int64(n))
	}
	return false
}

// describe names a value's type and, for a scalar, the value.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return "a string" // its value may be a secret's
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	if isNumber(v) {
		return fmt.Sprintf("the number %v", v)
	}
	return fmt.Sprintf("%T", v)
}

// typeName is an OpenAPI type with its article ("a string").
func typeName(t string) string {
	switch t {
	case "object":
		return "an object"
	case "array":
		return "a list"
	case "integer":
		return "an integer"
	case "boolean":
		return "true or false"
	}
	return "a " + t
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = fmt.Sprint(e)
	}
	return strings.Join(parts, ", ")
}
