package manifest

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/spec"
)

const fieldPosDoc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    example.com/owner: team
    plain: x
spec:
  template:
    spec:
      nodeSelector:
        beta.kubernetes.io/os: linux
      containers:
        - name: side
          image: busybox
        - name: web
          image: nginx
          ports:
            - {containerPort: 80, protocol: TCP}
            - containerPort: 81
              protocol: UDP
          resourcess:
            limits: {memory: 64Mi}
          command:
            - |
              echo one
              echo two
`

func TestFieldPos(t *testing.T) {
	t.Parallel()
	checkFieldPos(t, fieldPosDoc, []struct{ path, want string }{
		{"spec.template.spec.containers[1].resourcess", "22:11"},
		{".spec.template.spec.containers[name=\"web\"].resourcess", "22:11"},
		{"spec.template.spec.containers[1].resourcess.limits.memory", "23:22"},
		{"spec.template.spec.containers[0]", "14:11"},
		{"spec.template.spec.containers[name=\"side\"].image", "15:11"},
		{".spec.template.spec.containers[name=\"web\"].ports[containerPort=81,protocol=\"UDP\"].protocol", "21:15"},
		{"spec.template.spec.containers[1].ports[0].protocol", "19:35"},
		{"spec.template.spec.nodeSelector[beta.kubernetes.io/os]", "12:9"},
		{"metadata.annotations.example.com/owner", "6:5"},
		{"metadata.annotations.plain", "7:5"},
		{"spec.template.spec.containers[1].command[0]", "25:15"},
		// Not written (defaulted by the server): the deepest written field.
		{"spec.template.spec.containers[1].imagePullPolicy", "16:11"},
		{"spec.replicas", "8:1"},
		{"spec.template.spec.containers[7].name", "13:7"},
		{"", "1:1"},
	})
}

// Anchors, aliases and merge keys: a field reached through an alias is
// where its anchor writes it.
func TestFieldPosAnchorsAndMerges(t *testing.T) {
	t.Parallel()
	text := `x-common: &common
  image: nginx
  imagee: typo
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - <<: *common
      name: a
    - *common
`
	checkFieldPos(t, text, []struct{ path, want string }{
		{"spec.containers[0].imagee", "3:3"},
		{"spec.containers[0].name", "10:7"},
		{"spec.containers[1].image", "2:3"},
	})
}

// In a multi-document file the object's own document answers, List items
// included, with lines of the whole file.
func TestSourcePosMultiDocument(t *testing.T) {
	t.Parallel()
	text := `---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {k: v}
---
# the second one
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
dataa: {k: v}
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Secret
    metadata: {name: s}
    stringDataa: {k: v}
`
	objs, err := DecodeManifests([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	rememberOrigin(objs, &origin{file: "m.yaml", text: []byte(text)})
	want := map[string]string{"a": "m.yaml:5:1", "b": "m.yaml:11:1", "s": "m.yaml:19:5"}
	paths := map[string]string{"a": "data", "b": "dataa", "s": "stringDataa"}
	for _, o := range objs {
		if got := SourcePos(o, paths[o.GetName()]).String(); got != want[o.GetName()] {
			t.Errorf("SourcePos(%s, %s) = %s, want %s", o.GetName(), paths[o.GetName()], got, want[o.GetName()])
		}
	}
	// An inline block maps through where the spec writes it.
	rememberOrigin(objs[:1], &origin{at: &spec.TextAt{File: "khook.yaml", Line: 12, Col: 9}, text: []byte(text)})
	if got := SourcePos(objs[0], "data.k").String(); got != "khook.yaml:16:16" {
		t.Errorf("inline SourcePos = %s, want khook.yaml:16:16", got)
	}
	// An object khook did not load has no position.
	if got := SourcePos(&unstructured.Unstructured{}, "spec"); !got.IsZero() {
		t.Errorf("SourcePos of an unknown object = %v, want zero", got)
	}
}

// FieldPos never panics and always answers a written position or zero.
func FuzzFieldPos(f *testing.F) {
	f.Add(fieldPosDoc, "spec.template.spec.containers[1].resourcess")
	f.Add("a: &x {b: [1, 2]}\nc: *x\nd:\n  <<: [*x]\n", ".c.b[1]")
	f.Add("a:\n  - k: \"v,w\"\n", `a[k="v,w"].z`)
	f.Add("---\n- 1\n---\nx: y\n", "[0]")
	f.Fuzz(func(t *testing.T, text, path string) {
		lines := strings.Count(text, "\n") + 1
		for _, d := range yamlDocuments([]byte(text)) {
			line, col := FieldPos(d, path)
			if line < 0 || col < 0 || line > lines {
				t.Fatalf("FieldPos(%q) = %d:%d outside the %d-line text", path, line, col, lines)
			}
		}
	})
}

func checkFieldPos(t *testing.T, text string, cases []struct{ path, want string }) {
	t.Helper()
	docs := yamlDocuments([]byte(text))
	for _, tc := range cases {
		line, col := FieldPos(docs[0], tc.path)
		if got := fmt.Sprintf("%d:%d", line, col); got != tc.want {
			t.Errorf("FieldPos(%q) = %s, want %s", tc.path, got, tc.want)
		}
	}
}
