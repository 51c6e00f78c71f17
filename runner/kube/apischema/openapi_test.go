package apischema

import (
	"context"
	"github.com/khook/khook/runner/kube/manifest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/spec"
)

// Offline validation finds each problem and maps it to where it is
// written: through nested lists, after block scalars, into anchors and
// merge keys, and in the right document of a multi-document file.
func TestValidateSchemaPositions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		want       []string // "line:col path: message"
	}{
		{"nested lists", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: side
          image: busybox
        - name: web
          image: nginx
          ports:
            - containerPort: 80
              protocl: TCP
          resourcess:
            limits: {memory: 64Mi}
`, []string{
			`16:15 spec.template.spec.containers[1].ports[0].protocl: unknown field "spec.template.spec.containers[1].ports[0].protocl"`,
			`17:11 spec.template.spec.containers[1].resourcess: unknown field "spec.template.spec.containers[1].resourcess"`,
		}},
		{"block scalars", `apiVersion: v1
kind: Pod
metadata:
  name: job
  annotations:
    note: |
      a literal block
      of three lines
      resourcess: not a field
spec:
  containers:
    - name: run
      image: busybox
      command:
        - sh
        - -c
        - >
          echo folded
          text
      imagePullPolicy: always
      resourcess: {}
`, []string{
			`20:7 spec.containers[0].imagePullPolicy: spec.containers[0].imagePullPolicy is "always", not one of Always, IfNotPresent, Never`,
			`21:7 spec.containers[0].resourcess: unknown field "spec.containers[0].resourcess"`,
		}},
		{"anchors and merge keys", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: "3"
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - &base
          name: web
          image: nginx
          resourcess: {}
        - <<: *base
          name: copy
          portz: []
`, []string{
			`5:3 spec.replicas: spec.replicas must be an integer, not a string`,
			`14:11 spec.template.spec.containers[0].resourcess: unknown field "spec.template.spec.containers[0].resourcess"`,
			`17:11 spec.template.spec.containers[1].portz: unknown field "spec.template.spec.containers[1].portz"`,
			`14:11 spec.template.spec.containers[1].resourcess: unknown field "spec.template.spec.containers[1].resourcess"`,
		}},
		{"multi-document, CRD from the same file", `apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {key: value}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: {type: integer}
                color: {type: string, enum: [red, blue]}
                extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
dataa: {key: value}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, labelz: {}}
spec:
  color: green
  colour: red
  extra: {anything: goes}
`, []string{
			`32:1 dataa: unknown field "dataa"`,
			`36:21 metadata.labelz: unknown field "metadata.labelz"`,
			`37:1 spec.size: missing required field "spec.size"`,
			`38:3 spec.color: spec.color is "green", not one of red, blue`,
			`39:3 spec.colour: unknown field "spec.colour"`,
		}},
		{"containers missing", `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - image: busybox
      ports: [{containerPort: http}]
`, []string{
			`6:7 spec.containers[0].name: missing required field "spec.containers[0].name"`,
			`7:16 spec.containers[0].ports[0].containerPort: spec.containers[0].ports[0].containerPort must be an integer, not a string`,
		}},
		{"valid", `apiVersion: v1
kind: Service
metadata: {name: s, labels: {app.kubernetes.io/name: s}}
spec:
  type: ClusterIP
  ports: [{port: 80, targetPort: http}]
---
apiVersion: example.com/v1
kind: Unknown
metadata: {name: u}
whatever: true
`, nil},
	}
	builtin, err := BuiltinSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			objs, err := manifest.LoadManifests(context.Background(), dir, []spec.Source{{File: "m.yaml"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			schemas := builtin.WithCRDs(objs)
			var got []string
			for _, obj := range objs {
				problems, _ := schemas.Validate(obj)
				for _, p := range problems {
					pos := manifest.SourcePos(obj, p.Path)
					got = append(got, strings.TrimPrefix(pos.String(), filepath.Join(dir, "m.yaml")+":")+" "+p.Path+": "+p.Message)
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// Whatever a manifest or a CRD's schema holds, validation returns: no
// panic, no endless walk through a recursive schema.
func FuzzValidateSchema(f *testing.F) {
	f.Add("spec: {replicas: 1, template: {spec: {containers: [{name: a, resourcess: {}}]}}}", "type: object\nproperties: {spec: {type: object, properties: {a: {type: integer}}}}")
	f.Add("spec: [1, 2]\nstatus: null", "type: object\nadditionalProperties: false")
	f.Add("spec: {a: {b: {c: x}}}", "type: object\nproperties: {spec: {x-kubernetes-preserve-unknown-fields: true, items: {type: string}}}")
	f.Add("metadata: {labels: [x]}", "properties: {spec: {additionalProperties: {type: array, items: {enum: [1, a]}}}}")
	builtin, err := BuiltinSchemas()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, object, schemaText string) {
		var body, raw map[string]any
		if yaml.Unmarshal([]byte(object), &body) != nil || body == nil {
			return
		}
		_ = yaml.Unmarshal([]byte(schemaText), &raw)
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"spec": map[string]any{"group": "example.com", "names": map[string]any{"kind": "Thing"},
				"versions": []any{map[string]any{"name": "v1", "schema": map[string]any{"openAPIV3Schema": raw}}}},
		}}
		schemas := builtin.WithCRDs([]*unstructured.Unstructured{crd})
		for _, gvk := range []string{"apps/v1|Deployment", "v1|Pod", "example.com/v1|Thing", "apiextensions.k8s.io/v1|CustomResourceDefinition"} {
			av, kind, _ := strings.Cut(gvk, "|")
			obj := &unstructured.Unstructured{Object: map[string]any{}}
			for k, v := range body {
				obj.Object[k] = v
			}
			obj.SetAPIVersion(av)
			obj.SetKind(kind)
			schemas.Validate(obj)
		}
	})
}

// An empty value of an enum field the API server defaults before it
// validates is accepted; one it does not default is still refused (trial
// 46s69j's D1: bitnami mysql's `podManagementPolicy: ""`).
func TestValidateEmptyDefaultedEnum(t *testing.T) {
	s, err := BuiltinSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for key := range emptyAccepted {
		i := strings.LastIndex(key, ".")
		def, prop := s.defs[key[:i]], key[i+1:]
		if def == nil || def.Properties[prop] == nil || len(def.Properties[prop].Enum) == 0 {
			t.Errorf("emptyAccepted names %s, which is no enum field of the schemas", key)
		}
	}
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  podManagementPolicy: ""
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      restartPolicy: ""
      containers: [{name: db, image: busybox, imagePullPolicy: "", ports: [{containerPort: 1, protocol: ""}]}]
      topologySpreadConstraints: [{maxSkew: 1, topologyKey: k, whenUnsatisfiable: ""}]
`), &obj.Object); err != nil {
		t.Fatal(err)
	}
	problems, _ := s.Validate(&obj)
	if len(problems) != 1 || problems[0].Path != "spec.template.spec.topologySpreadConstraints[0].whenUnsatisfiable" {
		t.Errorf("problems = %v, want only whenUnsatisfiable's", problems)
	}
}
