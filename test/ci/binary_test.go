package ci

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/gitlab"
	"github.com/khook/khook/report"
	"github.com/khook/khook/test/ci/citest"
)

func copyTestdata(t *testing.T, dst string) {
	t.Helper()
	for _, f := range []string{"khook.yaml", "invalid.yaml", "vars.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var annotationLine = regexp.MustCompile(`(?m)^::(error|warning|notice)[ :].*$`)

// The runner's way: environment only, hyphenated INPUT_ names, the
// workspace as working directory.
func TestBinaryValidateOnGitHub(t *testing.T) {
	g := citest.NewGitHub(t, "http://127.0.0.1:1", 3, map[string]string{
		"command": "validate", "file": "khook.yaml", "var-file": "vars.yaml", "comment": "never",
	})
	copyTestdata(t, g.Workspace)
	g.Set("KHOOK_SECRET_DB_TOKEN=s3cret-db", "KHOOK_SECRET_CERT=multi\nline-s3cret")
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	lines := strings.Split(res.Stdout, "\n")
	if !strings.HasPrefix(lines[0], "::add-mask::") || !strings.Contains(res.Stdout, "::add-mask::line-s3cret\n") {
		t.Errorf("the first line must register a mask, got %q", lines[0])
	}
	outs, err := gha.ParseKeyValues(g.Read(t, "output"))
	if err != nil || outs["status"] != "ok" || outs["failure-reason"] != "" {
		t.Errorf("outputs %v (%v)", outs, err)
	}
	if !strings.Contains(g.Read(t, "summary"), "The spec is valid: 3 steps") {
		t.Errorf("summary:\n%s", g.Read(t, "summary"))
	}
}

func TestBinaryInvalidSpecAnnotatesItsLines(t *testing.T) {
	g := citest.NewGitHub(t, "http://127.0.0.1:1", 3, map[string]string{"command": "validate", "file": "invalid.yaml", "comment": "never"})
	copyTestdata(t, g.Workspace)
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 2 {
		t.Fatalf("exit %d, want 2\n%s", res.Code, res.Stdout)
	}
	got := annotationLine.FindAllString(res.Stdout, -1)
	want := []string{
		`::error file=invalid.yaml,line=8,col=14,title=khook%3A invalid spec at steps.0.helm.chart::`,
		`::error file=invalid.yaml,line=10,col=13,title=khook%3A invalid spec at steps.1.needs.0::`,
	}
	if len(got) != len(want) {
		t.Fatalf("annotations %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("annotation %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if outs["failure-reason"] != "validation" || outs["status"] != "failed" {
		t.Errorf("outputs %v", outs)
	}
}

// gitlabEnv is a GitLab job's environment: KHOOK_ inputs, CI_PROJECT_DIR.
func gitlabEnv(dir string, kv ...string) []string {
	return append([]string{"GITLAB_CI=true", "CI=true", "CI_PROJECT_DIR=" + dir, "CI_JOB_URL=https://gitlab.example/acme/infra/-/jobs/7"}, kv...)
}

func checkGitLabReports(t *testing.T, dir string) (report.JUnitSuites, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".khook", "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var suites report.JUnitSuites
	if err := xml.Unmarshal(data, &suites); err != nil {
		t.Fatalf("JUnit does not parse back: %v\n%s", err, data)
	}
	env, err := os.ReadFile(filepath.Join(dir, ".khook", "khook.env"))
	if err != nil {
		t.Fatal(err)
	}
	if len(env) >= gitlab.DotenvMaxBytes {
		t.Errorf("dotenv is %d bytes, GitLab takes under %d", len(env), gitlab.DotenvMaxBytes)
	}
	vars := map[string]string{}
	key := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, line := range strings.Split(strings.TrimSuffix(string(env), "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || !key.MatchString(k) || strings.ContainsAny(v, "\"'") {
			t.Errorf("dotenv line %q is not KEY=value as GitLab reads it", line)
		}
		vars[k] = v
	}
	if len(vars) > gitlab.DotenvMaxVars {
		t.Errorf("dotenv has %d variables, GitLab's smallest plans take %d", len(vars), gitlab.DotenvMaxVars)
	}
	return suites, vars
}

func TestBinaryGitLabValidationReports(t *testing.T) {
	dir := t.TempDir()
	copyTestdata(t, dir)
	res := citest.Run(t, dir, gitlabEnv(dir, "KHOOK_COMMAND=validate", "KHOOK_FILE=invalid.yaml"))
	if res.Code != 2 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stdout)
	}
	suites, vars := checkGitLabReports(t, dir)
	if suites.Failures != 2 || vars["KHOOK_FAILURE_REASON"] != "validation" || vars["KHOOK_STATUS"] != "failed" {
		t.Errorf("junit failures %d, dotenv %v", suites.Failures, vars)
	}
	if strings.Contains(res.Stdout, "::") {
		t.Error("GitLab mode must not print GitHub workflow commands")
	}
}

// An apply against a cluster that does not answer: the run-level error
// lands in every report with failure-reason cluster-unreachable.
func TestBinaryGitLabUnreachableCluster(t *testing.T) {
	dir := t.TempDir()
	copyTestdata(t, dir)
	kubeconfig := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: kc-t0ken-value}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	res := citest.Run(t, dir, gitlabEnv(dir, "KHOOK_COMMAND=apply", "KHOOK_VAR_FILE=vars.yaml",
		"KHOOK_SECRET_DB_TOKEN=db", "KHOOK_KUBECONFIG="+kubeconfig, "TMPDIR="+t.TempDir()))
	if res.Code != 1 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	suites, vars := checkGitLabReports(t, dir)
	if vars["KHOOK_FAILURE_REASON"] != "cluster-unreachable" || suites.Failures != 1 {
		t.Errorf("junit %+v dotenv %v\n%s", suites, vars, res.Stdout)
	}
	if strings.Contains(res.Stdout+res.Stderr, "kc-t0ken-value") {
		t.Error("the kubeconfig token leaked")
	}
}
