package manifest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

func names(t *testing.T, data string) []string {
	t.Helper()
	objs, err := DecodeManifests([]byte(data))
	if err != nil {
		t.Fatalf("DecodeManifests: %v", err)
	}
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func TestDecodeManifests(t *testing.T) {
	got := names(t, `
---
# only a comment
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b}
- apiVersion: v1
  kind: Secret
  metadata: {name: c}
---
`)
	if strings.Join(got, ",") != "ConfigMap/a,ConfigMap/b,Secret/c" {
		t.Errorf("got %v", got)
	}
	objs, err := DecodeManifests([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\nspec: {replicas: 3}\n"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("got %d objects, %v", len(objs), err)
	}
	if v, ok := objs[0].Object["spec"].(map[string]any)["replicas"].(int64); !ok || v != 3 {
		t.Errorf("integers must decode as int64, got %T", objs[0].Object["spec"].(map[string]any)["replicas"])
	}
}

func TestDecodeManifestsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"- a\n- b\n": "document 1: is not a mapping",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: b}\n": "document 2: is not a Kubernetes object",
		"apiVersion: v1\nkind: ConfigMap\n": "has no metadata.name",
		"a: [\n":                            "document 1",
	} {
		_, err := DecodeManifests([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeManifests(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const cmYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"

func TestLoadManifestsSources(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m/file.yaml"), fmt.Sprintf(cmYAML, "from-file"))
	writeFile(t, filepath.Join(dir, "base/cm.yaml"), fmt.Sprintf(cmYAML, "from-base"))
	writeFile(t, filepath.Join(dir, "base/kustomization.yaml"), "resources: [cm.yaml]\n")
	writeFile(t, filepath.Join(dir, "overlay/kustomization.yaml"), "resources: [../base]\nnamePrefix: x-\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, cmYAML, "from-url")
	}))
	defer srv.Close()

	objs, err := LoadManifests(context.Background(), dir, []spec.Source{
		{Inline: fmt.Sprintf(cmYAML, "inline")},
		{File: "m/file.yaml"},
		{URL: srv.URL},
		{Kustomize: "./overlay"},
	}, nil)
	if err != nil {
		t.Fatalf("LoadManifests: %v", err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetName())
	}
	if strings.Join(got, ",") != "inline,from-file,from-url,x-from-base" {
		t.Errorf("got %v", got)
	}
}

func TestKustomizeRemoteBaseRejected(t *testing.T) {
	dir := t.TempDir()
	remote := "https://github.com/kubernetes-sigs/kustomize//examples/multibases?ref=v1.0.6"
	writeFile(t, filepath.Join(dir, "base/kustomization.yaml"), "resources:\n- "+remote+"\n")
	writeFile(t, filepath.Join(dir, "overlay/kustomization.yaml"), "resources: [../base]\n")
	_, err := LoadManifests(context.Background(), dir, []spec.Source{{Kustomize: "overlay"}}, nil)
	want := "kustomize: remote base " + remote + " is not supported: khook renders kustomizations in-process without git; vendor the base locally"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
	writeFile(t, filepath.Join(dir, "gh/kustomization.yaml"), "resources:\n- github.com/org/repo/deploy?ref=main\n")
	if _, err := LoadManifests(context.Background(), dir, []spec.Source{{Kustomize: "gh"}}, nil); err == nil || !strings.Contains(err.Error(), "remote base github.com/org/repo") {
		t.Errorf("github shorthand: got %v", err)
	}
	if _, err := LoadManifests(context.Background(), dir, []spec.Source{{Kustomize: "missing"}}, nil); err == nil || !strings.Contains(err.Error(), "kustomize missing: cannot read the kustomization directory") {
		t.Errorf("missing dir: got %v", err)
	}
}

func TestURLSourceErrorsHideCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write(make([]byte, URLMaxBytes+10))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	withCreds := strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1)
	for path, want := range map[string]string{"/missing": "404 Not Found", "/big": "larger than the 16 MiB limit"} {
		_, err := LoadManifests(context.Background(), "", []spec.Source{{URL: withCreds + path}}, nil)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: got %v, want %q without the password", path, err, want)
		}
	}
	if _, err := LoadManifests(context.Background(), "", []spec.Source{{URL: "ftp://x/y"}}, nil); err == nil || !strings.Contains(err.Error(), "only http:// and https://") {
		t.Errorf("ftp: got %v", err)
	}
}

// A document without kind (a helm values file) is refused without its
// text: apimachinery's error quotes the whole document, secrets and all
// (trial 46s67s's D1: an API key in an import's header).
func TestKindlessDocumentIsRefusedWithoutItsText(t *testing.T) {
	_, err := DecodeManifests([]byte("extraEnvVars:\n  - name: OPENAI_API_KEY\n    value: s3cr3t-value\n"))
	if err == nil || strings.Contains(err.Error(), "s3cr3t-value") || !strings.Contains(err.Error(), "apiVersion and kind are required") {
		t.Errorf("err = %v", err)
	}
}
