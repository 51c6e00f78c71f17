package spec

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/khook/khook/redact"
)

const schemaFile = "../docs/schema/v1/khook.json"

// TestSchemaUpToDate fails when the committed schema drifts from Schema()
// (go test ./spec -run TestSchemaUpToDate -update rewrites it).
func TestSchemaUpToDate(t *testing.T) {
	got := Schema()
	if !bytes.Equal(got, Schema()) {
		t.Fatal("Schema() is not deterministic")
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(schemaFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("%v (run go test ./spec -run TestSchemaUpToDate -update)", err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%s is out of date: run go test ./spec -run TestSchemaUpToDate -update", schemaFile)
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SchemaID)
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return sch
}

// yamlToJSON converts YAML text to the JSON-compatible value the validator takes.
func yamlToJSON(t *testing.T, text []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(text, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// exampleInputs are the variables each example needs. Top-level examples
// need none (they load, plan and graph as written); examples/variables
// shows the forms without defaults, so it takes a var file and a secret.
var exampleInputs = map[string]LoadOptions{
	"../examples/inputs/khook.yaml": {
		VarFiles: []string{"../examples/inputs/vars.yaml"},
		Environ:  []string{"KHOOK_SECRET_DNS_TOKEN=example-token"},
	},
	"../examples/variables/khook.yaml": {
		VarFiles: []string{"../examples/variables/vars.yaml"},
		Environ:  []string{"KHOOK_SECRET_REGISTRY_TOKEN=example-token"},
	},
}

const schemaComment = "# yaml-language-server: $schema=" + SchemaID

// TestExamples: every example starts with the schema comment, validates
// against the schema as written (what an editor sees) and after
// substitution, and loads.
func TestExamples(t *testing.T) {
	sch := compileSchema(t)
	files, _ := filepath.Glob("../examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for f := range exampleInputs {
		files = append(files, f)
	}
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, "../examples/"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _ := bufio.NewReader(bytes.NewReader(raw)).ReadString('\n')
			if strings.TrimSpace(first) != schemaComment {
				t.Errorf("first line is %q, want %q", strings.TrimSpace(first), schemaComment)
			}
			if err := sch.Validate(yamlToJSON(t, raw)); err != nil {
				t.Errorf("raw example fails the schema: %v", err)
			}
			opts := exampleInputs[f]
			opts.VarPrefix, opts.SecretPrefix, opts.Redactor = DefaultVarPrefix, DefaultSecretPrefix, redact.New()
			vs, probs := gatherVars(opts)
			opts.Files = []string{f}
			files, decls, err := readFiles(opts) // declared defaults feed ${}
			if err != nil {
				t.Fatal(err)
			}
			probs = append(probs, resolveDeclared(decls, vs, opts)...)
			out, _, probs2 := substitute(f, files[0].src, vs, newPipelines())
			if probs = append(probs, probs2...); len(probs) > 0 {
				t.Fatal(probs)
			}
			if err := sch.Validate(yamlToJSON(t, out)); err != nil {
				t.Errorf("substituted example fails the schema: %v", err)
			}
			opts.Files = []string{f}
			if _, err := Load(opts); err != nil {
				t.Errorf("example does not load:\n%v", err)
			}
		})
	}
}

// Valid testdata passes the schema too.
func TestTestdataAgainstSchema(t *testing.T) {
	sch := compileSchema(t)
	files, _ := filepath.Glob("testdata/valid-*.yaml")
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		if err := sch.Validate(yamlToJSON(t, raw)); err != nil {
			t.Errorf("%s fails the schema: %v", f, err)
		}
	}
}

// The schema's one-of constraints reject what the loader rejects.
func TestSchemaRejects(t *testing.T) {
	sch := compileSchema(t)
	base := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: x}\nsteps:\n  - name: a\n"
	for name, step := range map[string]string{
		"no action":             "    timeout: 1m\n",
		"two actions":           "    wait: {for: delete, on: pods}\n    job: {image: busybox}\n",
		"helm skipIf":           "    helm: {chart: ./c, skipIf: exists}\n",
		"apply skipIf":          "    apply: {manifests: [{file: a.yaml}], skipIf: installed}\n",
		"job skipIf":            "    job: {image: busybox, skipIf: installed}\n",
		"delete two forms":      "    delete: {resource: pods, release: x}\n",
		"delete no form":        "    delete: {namespace: x}\n",
		"release selector":      "    delete: {release: x, selector: a=b}\n",
		"ns and all":            "    wait: {for: delete, on: pods, namespace: x, allNamespaces: true}\n",
		"rollout both":          "    rollout: {restart: deployment/x, status: deployment/x, namespace: x}\n",
		"rollout neither":       "    rollout: {namespace: x}\n",
		"source two keys":       "    apply: {manifests: [{file: a.yaml, url: \"https://x\"}]}\n",
		"valuesFrom inline":     "    helm: {chart: ./c, valuesFrom: [{inline: x}]}\n",
		"json patch as map":     "    patch: {target: deployment/x, type: json, patch: {a: 1}}\n",
		"merge patch as list":   "    patch: {target: deployment/x, type: merge, patch: [{op: remove, path: /a}]}\n",
		"unknown field":         "    neds: [b]\n    wait: {for: delete, on: pods}\n",
		"bad wait.for":          "    wait: {for: readyish, on: pods}\n",
		"apply waitFor delete":  "    apply: {manifests: [{file: a.yaml}], waitFor: delete}\n",
		"bool as text":          "    helm: {chart: ./c, atomic: yes}\n",
		"bare without repo":     "    helm: {chart: cilium}\n",
		"inline and version":    "    helm: {chart: \"cilium:1.0.0\", repo: \"https://x\", version: 1.0.0}\n",
		"oci with repo":         "    helm: {chart: \"oci://r/c\", repo: \"https://x\"}\n",
		"oci tag and version":   "    helm: {chart: \"oci://r/c:1.0\", version: \"1.0\"}\n",
		"local with version":    "    helm: {chart: ./c, version: 1.0.0}\n",
		"local with auth":       "    helm: {chart: ../c.tgz, auth: {username: u, password: p}}\n",
		"env from two sources":  "    job: {image: b, env: {A: {valueFrom: {secretKeyRef: {name: a, key: k}, configMapKeyRef: {name: a, key: k}}}}}\n",
		"envFrom no source":     "    job: {image: b, envFrom: [{prefix: A}]}\n",
		"volume mounts nothing": "    job: {image: b, volumes: [{name: a, mountPath: /a}]}\n",
	} {
		if err := sch.Validate(yamlToJSON(t, []byte(base+step))); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
	ok := base + "    retries: ${RETRIES}\n    helm: {chart: ./c, atomic: \"${ATOMIC}\", namespace: \"${NS|lower}\"}\n"
	if err := sch.Validate(yamlToJSON(t, []byte(ok))); err != nil {
		t.Errorf("unsubstituted ${} values must pass: %v", err)
	}
}

// The packaged demo chart the examples use matches its directory.
func TestDemoChartPackageUpToDate(t *testing.T) {
	f, err := os.Open("../examples/charts/demo-0.1.0.tgz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	packaged := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		packaged[h.Name] = true
		want, err := os.ReadFile(filepath.Join("../examples/charts", h.Name))
		got, _ := io.ReadAll(tr)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s in demo-0.1.0.tgz differs from examples/charts/%s: repackage it (see examples/README.md)", h.Name, h.Name)
		}
	}
	filepath.WalkDir("../examples/charts/demo", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if rel, _ := filepath.Rel("../examples/charts", path); !packaged[rel] {
				t.Errorf("%s is missing from demo-0.1.0.tgz: repackage it (see examples/README.md)", rel)
			}
		}
		return nil
	})
}
