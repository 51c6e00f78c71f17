package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
)

// An apply, then a plan of a changed encrypted value with a diff and a PR
// comment, through khook ci with the sops-age-key input: the plaintexts and
// the key reach no sink (stdout, stderr, outputs, summary, .khook files,
// comments, the state record).
func TestSopsThroughCI(t *testing.T) {
	fixtures, _ := filepath.Abs(filepath.Join("..", "..", "e2e", "testdata"))
	keyFile, err := os.ReadFile(filepath.Join(fixtures, "sops", "TEST-ONLY-age.key"))
	if err != nil {
		t.Fatal(err)
	}
	var key string
	for _, l := range strings.Split(string(keyFile), "\n") {
		if strings.HasPrefix(l, "AGE-SECRET-KEY-") {
			key = l
		}
	}
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	vars := "NS=" + ns + "\nCHART=" + filepath.Join(fixtures, "charts", "e2e-demo") + "\nVALUES="
	g := newRunner(t, srv.URL, "sops.yaml", map[string]string{"command": "apply", "vars": vars + "values.enc.yaml", "sops-age-key": key})
	for _, f := range []string{"secret.enc.yaml", "values.enc.yaml", "values-changed.enc.yaml"} {
		data, err := os.ReadFile(filepath.Join(fixtures, "sops", f))
		if err != nil {
			t.Fatal(err)
		}
		g.Write(t, f, string(data))
	}
	sinks := map[string]string{}
	collect := func(run string, res citest.Result) {
		sinks[run+" stdout"], sinks[run+" stderr"] = withoutMasks(res.Stdout), res.Stderr
		sinks[run+" GITHUB_OUTPUT"], sinks[run+" summary"] = g.Read(t, "output"), g.Read(t, "summary")
		for name, body := range readDir(t, filepath.Join(g.Workspace, ".khook")) {
			sinks[run+" "+name] = body
		}
	}
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	collect("apply", res)

	g.ResetFiles()
	g.Set("INPUT_COMMAND=plan", "INPUT_DIFF=true", "INPUT_COMMENT=always", "INPUT_VARS="+vars+"values-changed.enc.yaml")
	res = citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("plan exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	collect("plan", res)
	for i, c := range srv.Comments(7) {
		sinks["comment "+string(rune('0'+i))] = c.Body
	}
	sinks["state record"] = stateRecord(t, ns, "sops")
	if !strings.Contains(sinks["plan summary"], "***") || sinks["comment 0"] == "" {
		t.Errorf("the plan summary masks nothing or no comment was posted: the test proves nothing\n%s", sinks["plan summary"])
	}
	for name, text := range sinks {
		for _, s := range []string{"Values-S3cret-9f2b", "Values-S3cret-CHANGED-41d", "Db-Passw0rd-7c1e", key} {
			if strings.Contains(text, s) {
				t.Errorf("%q leaked into %s", s, name)
			}
		}
	}
}
