package helmfile

import (
	"strings"
	"testing"
)

// What held-out trial 46zq (company, CI and dev-environment helmfiles, run
// once on d6b8935) showed, cut down.

// D2 (a GitLab CI helmfile): a release name from requiredEnv, and a
// namespace from requiredEnv through replace, are written as their
// values at import and said; a plain one stays ${NAME}.
func TestNameAndPipedNamespaceFromEnvSaid(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: '{{ requiredEnv "WEB_NAME" }}'
    namespace: '{{ requiredEnv "NAMESPACE" | replace "/" "-" }}'
    chart: oci://r.example/web
    version: 1.0.0
  - name: api
    namespace: '{{ requiredEnv "API_NS" }}'
    chart: oci://r.example/api
    version: 1.0.0
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{Env: lookupOf(map[string]string{"WEB_NAME": "web-1234", "NAMESPACE": "team-a", "API_NS": "api-ns"})})
	if err != nil {
		t.Fatal(err)
	}
	all, spec := everything(res), string(res.Spec)
	for _, want := range []string{"name: rendered from the environment variable WEB_NAME once, at import: written as web-1234",
		"namespace: rendered from the environment variable NAMESPACE through a template function once, at import: written as team-a"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in\n%s", want, all)
		}
	}
	if !strings.Contains(spec, "namespace: team-a\n") || !strings.Contains(spec, "namespace: ${API_NS}\n") {
		t.Errorf("spec:\n%s", spec)
	}
}
