package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
)

// Secrets of the shapes that break naive masking.
var leakSecrets = map[string]string{
	"MULTI":  "-----BEGIN TEST KEY-----\nc2VjcmV0LWxpbmUtb25l\nsecond-secret-line\n-----END TEST KEY-----",
	"REGEX":  `a.b*c+?(x|y)[z]^$\d{2}`,
	"URLISH": `p@ss:w/rd?x=1&y=%20#frag`,
	"SUBSTR": "migrate", // a substring of the step name migrate-db
}

// needles are the strings no sink may contain: each secret and each line
// of a multi-line one.
func needles() []string {
	var out []string
	for _, v := range leakSecrets {
		out = append(out, v)
		if strings.Contains(v, "\n") {
			out = append(out, strings.Split(v, "\n")...)
		}
	}
	return out
}

func withoutMasks(stdout string) string {
	var keep []string
	for _, l := range strings.Split(stdout, "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func readDir(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil {
			out[e.Name()] = string(data)
		}
	}
	return out
}

func TestNoSecretReachesAnySink(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	sinks := map[string]string{}
	secretEnv := []string{}
	for k, v := range leakSecrets {
		secretEnv = append(secretEnv, "KHOOK_SECRET_"+k+"="+v)
	}

	g := newRunner(t, srv.URL, "leak.yaml", map[string]string{"command": "plan", "diff": "true", "comment": "always", "vars": "NS=" + ns})
	g.Set(secretEnv...)
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("plan exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "::add-mask::") {
		t.Error("no ::add-mask:: lines")
	}
	sinks["plan stdout"], sinks["plan stderr"] = withoutMasks(res.Stdout), res.Stderr
	sinks["plan GITHUB_OUTPUT"], sinks["plan summary"] = g.Read(t, "output"), g.Read(t, "summary")
	for name, body := range readDir(t, filepath.Join(g.Workspace, ".khook")) {
		sinks["plan "+name] = body
	}

	g.ResetFiles()
	g.Set("INPUT_COMMAND=apply")
	res = citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 1 {
		t.Fatalf("apply (with a wait that times out) exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	sinks["apply stdout"], sinks["apply stderr"] = withoutMasks(res.Stdout), res.Stderr
	sinks["apply GITHUB_OUTPUT"], sinks["apply summary"] = g.Read(t, "output"), g.Read(t, "summary")
	for name, body := range readDir(t, filepath.Join(g.Workspace, ".khook")) {
		sinks["apply "+name] = body
	}
	for i, c := range srv.Comments(7) {
		sinks["comment "+string(rune('0'+i))] = c.Body
	}

	// GitLab mode: JUnit and dotenv.
	dir := t.TempDir()
	spec, _ := os.ReadFile(filepath.Join("testdata", "leak.yaml"))
	os.WriteFile(filepath.Join(dir, "khook.yaml"), spec, 0o644)
	kc := kubeconfig(t)
	env := append([]string{"GITLAB_CI=true", "CI_PROJECT_DIR=" + dir, "KHOOK_COMMAND=apply", "KHOOK_VARS=NS=" + ns,
		"KHOOK_KUBECONFIG=" + string(kc), "TMPDIR=" + t.TempDir()}, secretEnv...)
	res = citest.Run(t, dir, env)
	if res.Code != 1 {
		t.Fatalf("GitLab apply exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	sinks["gitlab stdout"], sinks["gitlab stderr"] = res.Stdout, res.Stderr
	for name, body := range readDir(t, filepath.Join(dir, ".khook")) {
		sinks["gitlab "+name] = body
	}
	// The record is keyed by step name, which it must keep to resume; a
	// secret that happens to be part of a step name ("migrate" in
	// migrate-db) is in the spec as written, not leaked, so step names are
	// taken out before searching. Everything else in it must be masked.
	record := stateRecord(t, ns, "leak")
	for _, step := range []string{"settings", "migrate-db", "never-ready"} {
		record = strings.ReplaceAll(record, step, "<step>")
	}
	sinks["state record"] = record

	for _, want := range []string{"gitlab junit.xml", "gitlab khook.env", "apply results.json", "plan plan.json", "comment 0"} {
		if sinks[want] == "" {
			t.Errorf("sink %s is empty: the test would prove nothing", want)
		}
	}
	if !strings.Contains(sinks["plan summary"], "***") {
		t.Error("the plan summary masks nothing: the secrets never reached it, so the test proves nothing")
	}
	for name, text := range sinks {
		for _, s := range needles() {
			if strings.Contains(text, s) {
				t.Errorf("secret %q leaked into %s", s, name)
			}
		}
	}
}
