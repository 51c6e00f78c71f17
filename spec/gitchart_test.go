package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGitRepo(t *testing.T) {
	for raw, want := range map[string]GitRepo{
		"git+https://github.com/rancher/local-path-provisioner@deploy/chart?ref=v0.0.31":    {URL: "https://github.com/rancher/local-path-provisioner", Path: "deploy/chart", Ref: "v0.0.31"},
		"git+https://github.com/tektoncd/operator@charts?ref=v0.76.0&sparse=0":              {URL: "https://github.com/tektoncd/operator", Path: "charts", Ref: "v0.76.0"},
		"git+https://u:tok@gitlab.example/g/sub/repo.git@/charts/?ref=main&depupdate=0":     {URL: "https://u:tok@gitlab.example/g/sub/repo.git", Path: "charts", Ref: "main"},
		"git+http://127.0.0.1:8080/charts.git?ref=0123456789abcdef0123456789abcdef01234567": {URL: "http://127.0.0.1:8080/charts.git", Ref: "0123456789abcdef0123456789abcdef01234567"},
	} {
		got, err := ParseGitRepo(raw)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for raw, says := range map[string]string{
		"git+https://github.com/org/repo@charts":                "names no ref: pin the chart with ?ref=",
		"git+ssh://git@github.com/org/repo@charts?ref=v1":       "over git+https:// (or git+http://), not git+ssh://",
		"git+https://github.com/org/repo@charts?ref=v1&depth=1": "the query parameter depth=, which helm-git does not know",
		"git+https://github.com/org/repo@../etc?ref=v1":         "leaves the repository",
		"git+https://github.com@charts?ref=v1":                  "names no repository after the host",
	} {
		if _, err := ParseGitRepo(raw); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: err %v, want it to say %q", raw, err, says)
		}
	}
	if (GitRepo{Ref: "v1.2.3"}).PinsCommit() || !(GitRepo{Ref: strings.Repeat("a", 40)}).PinsCommit() {
		t.Error("PinsCommit: a tag pins no commit; a full hash does")
	}
}

// A git chart repository is checked at its line; --require-verified-charts
// takes a full commit hash as its pin and refuses a tag or branch.
func TestGitRepoValidated(t *testing.T) {
	dir := t.TempDir()
	writeVerifyKeys(t, dir)
	spec := verifyHead + `  - name: tag
    helm: {chart: demo, repo: "git+https://github.com/org/repo@charts?ref=v1"}
  - name: pinned
    helm: {chart: demo, repo: "git+https://github.com/org/repo@charts?ref=0123456789abcdef0123456789abcdef01234567"}
`
	f := filepath.Join(dir, "khook.yaml")
	os.WriteFile(f, []byte(spec), 0o644)
	if _, err := Load(LoadOptions{Files: []string{f}}); err != nil {
		t.Fatalf("valid git charts refused: %v", err)
	}
	_, err := Load(LoadOptions{Files: []string{f}, RequireVerifiedCharts: true})
	var probs Problems
	if !errors.As(err, &probs) || len(probs) != 1 || !strings.Contains(probs[0].String(), "khook.yaml:6:31: steps.0.helm.repo: step tag reads its chart from git at v1, which can move") {
		t.Errorf("want one problem for step tag, got %v", err)
	}

	bad := verifyHead + `  - name: noref
    helm: {chart: demo, repo: "git+https://github.com/org/repo@charts"}
  - name: signed
    helm: {chart: demo, repo: "git+https://github.com/org/repo@charts?ref=v1", verify: {provenance: {keyring: ./pubring.gpg}}}
`
	os.WriteFile(f, []byte(bad), 0o644)
	_, err = Load(LoadOptions{Files: []string{f}})
	got := ""
	if errors.As(err, &probs) {
		got = probs.Error()
	}
	for _, want := range []string{
		"steps.0.helm.repo: the git chart repository git+https://github.com/org/repo@charts names no ref",
		"steps.1.helm.verify.provenance: a chart read from git (git+https://github.com/org/repo@charts?ref=v1) has no .prov to verify",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}
