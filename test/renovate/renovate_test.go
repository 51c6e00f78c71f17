// Package renovate runs the pinned Renovate CLI (tools/npm/renovate) with
// khook's preset (renovate/khook.json) against a spec that pins older charts
// and images than the harness's chart repository and registry serve.
package renovate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/template"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/needtool"
)

func TestMain(m *testing.M) {
	code := m.Run()
	citest.RemoveBuilds()
	os.Exit(code)
}

// The spec Renovate reads: each form the preset knows, pinned old, and one
// image already at its newest tag. Rendered again with Renovate's proposals,
// it must still validate.
const specTemplate = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: renovate-e2e
steps:
  - name: from-repo
    helm:
      chart: demo
      repo: {{.Repo}}
      version: {{index .V "from-repo"}}
  - name: inline
    helm:
      chart: demo:{{index .V "inline"}}
      repo: {{.Repo}}
  - name: from-oci
    helm:
      chart: oci://{{.Registry}}/charts/demo:{{index .V "from-oci"}}
  - name: migrate
    job:
      image: {{.Registry}}/tools/busybox:{{index .V "migrate"}}
      command: ["sh", "-c", "echo migrated"]
  - name: current
    job:
      image: {{.Registry}}/tools/kubectl:{{index .V "current"}}
      command: ["kubectl", "version"]
`

// An overlay (no apiVersion) in a khook*.yaml file.
const overlayTemplate = `steps:
  - name: extra
    helm:
      chart: demo
      repo: {{.Repo}}
      version: {{index .V "extra"}}
`

func render(t *testing.T, tmpl string, data any) string {
	t.Helper()
	var b bytes.Buffer
	if err := template.Must(template.New("").Option("missingkey=error").Parse(tmpl)).Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRenovateProposesNewerChartsAndImages(t *testing.T) {
	renovate := citest.NPMTool(t, "renovate", "renovate")
	needtool.Path(t, "git", "Renovate's local platform reads the repository with it")

	// The chart in two versions, in an HTTP repository and an OCI registry;
	// two images, one with a newer tag.
	dir := t.TempDir()
	old, newer := packageDemo(t, dir, "0.1.0"), packageDemo(t, dir, "0.2.0")
	repo := chartsrc.NewHTTPRepoFromFiles(t, chartsrc.Auth{}, old, newer)
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{})
	reg.PushFile(t, old)
	reg.PushFile(t, newer)
	pushImage(t, reg.Host, "tools/busybox", "1.36.0", "1.37.0")
	pushImage(t, reg.Host, "tools/kubectl", "1.36.3")

	pinned := map[string]string{"from-repo": "0.1.0", "inline": "0.1.0", "from-oci": "0.1.0", "migrate": "1.36.0", "current": "1.36.3", "extra": "0.1.0"}
	data := func(v map[string]string) any {
		return map[string]any{"Repo": repo.URL, "Registry": reg.Host, "V": v}
	}
	work := t.TempDir()
	write(t, filepath.Join(work, "clusters", "prod", "khook.yaml"), render(t, specTemplate, data(pinned)))
	write(t, filepath.Join(work, "clusters", "prod", "khook-extra.yaml"), render(t, overlayTemplate, data(pinned)))
	// Not khook's: same keys, another apiVersion; Renovate must leave it.
	write(t, filepath.Join(work, "other.yaml"), strings.Replace(render(t, specTemplate, data(pinned)), "khook.io/v1", "example.com/v1", 1))
	gitInit(t, work)

	// The preset's managers as a repository's renovate.json would extend
	// them (extends: github>khook/khook//renovate/khook needs GitHub).
	var preset map[string]any
	readJSON(t, filepath.Join(citest.RepoRoot(), "renovate", "khook.json"), &preset)
	config := map[string]any{
		"onboarding":      false,
		"requireConfig":   "optional",
		"dryRun":          "lookup",
		"enabledManagers": []string{"custom.jsonata"},
		"customManagers":  preset["customManagers"],
		// The harness's registry speaks plain HTTP on loopback.
		"hostRules": []map[string]any{{"matchHost": "127.0.0.1", "hostType": "docker", "insecureRegistry": true}},
	}
	configFile := filepath.Join(t.TempDir(), "config.json")
	writeJSON(t, configFile, config)

	base := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, renovate)
	cmd.Dir = work
	cmd.Env = []string{
		citest.NodePATH(t), "HOME=" + base,
		"RENOVATE_PLATFORM=local", "RENOVATE_CONFIG_FILE=" + configFile, "RENOVATE_BASE_DIR=" + base,
		"LOG_LEVEL=debug", "LOG_FORMAT=json", "RENOVATE_X_IGNORE_RE2=true",
		// Nothing but loopback: no proxy, no token, no GitHub.
		"NO_PROXY=*",
	}
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("renovate ran %s", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("renovate failed: %v\n%s", err, tail(out))
	}

	got := proposals(t, out)
	want := map[string]string{
		"clusters/prod/khook.yaml demo 0.1.0 (helm)":                                   "0.2.0",
		"clusters/prod/khook.yaml demo 0.1.0 (helm) inline":                            "0.2.0",
		"clusters/prod/khook.yaml oci://" + reg.Host + "/charts/demo 0.1.0 (helm-oci)": "0.2.0",
		"clusters/prod/khook.yaml " + reg.Host + "/tools/busybox 1.36.0 (job)":         "1.37.0",
		"clusters/prod/khook.yaml " + reg.Host + "/tools/kubectl 1.36.3 (job)":         "",
		"clusters/prod/khook-extra.yaml demo 0.1.0 (helm)":                             "0.2.0",
	}
	// Two deps share name and version (from-repo and inline): Renovate
	// lists both; they are told apart by order in the file.
	if !equal(got, want) {
		t.Fatalf("Renovate's proposals differ\n got: %s\nwant: %s\n%s", show(got), show(want), tail(out))
	}
	t.Logf("Renovate %s proposed:\n%s", filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(renovate)))), show(got))

	// The spec with the proposed versions in place validates.
	bumped := map[string]string{"from-repo": "0.2.0", "inline": "0.2.0", "from-oci": "0.2.0", "migrate": "1.37.0", "current": "1.36.3", "extra": "0.2.0"}
	spec := filepath.Join(work, "clusters", "prod", "khook.yaml")
	write(t, spec, render(t, specTemplate, data(bumped)))
	write(t, filepath.Join(work, "clusters", "prod", "khook-extra.yaml"), render(t, overlayTemplate, data(bumped)))
	khook := citest.Khook(t)
	vctx, vcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer vcancel()
	v := exec.CommandContext(vctx, khook, "validate", "-f", spec, "-f", filepath.Join(work, "clusters", "prod", "khook-extra.yaml"))
	if vout, err := v.CombinedOutput(); err != nil {
		t.Fatalf("khook validate on the bumped spec: %v\n%s", err, vout)
	}
}

// proposals reads Renovate's "packageFiles with updates" debug record: per
// dependency (file, name, current version, depType; a repeated one marked
// "inline"), the newest proposed version ("" when none).
func proposals(t *testing.T, log []byte) map[string]string {
	t.Helper()
	type dep struct {
		DepName      string `json:"depName"`
		CurrentValue string `json:"currentValue"`
		DepType      string `json:"depType"`
		SkipReason   string `json:"skipReason"`
		Updates      []struct {
			NewValue string `json:"newValue"`
		} `json:"updates"`
	}
	type packageFile struct {
		PackageFile string `json:"packageFile"`
		Deps        []dep  `json:"deps"`
	}
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec struct {
			Msg    string                   `json:"msg"`
			Config map[string][]packageFile `json:"config"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Msg != "packageFiles with updates" {
			continue
		}
		got := map[string]string{}
		for _, files := range rec.Config {
			for _, f := range files {
				for _, d := range f.Deps {
					key := fmt.Sprintf("%s %s %s (%s)", f.PackageFile, d.DepName, d.CurrentValue, d.DepType)
					if _, dup := got[key]; dup {
						key += " inline"
					}
					if d.SkipReason != "" {
						t.Errorf("Renovate skipped %s: %s", key, d.SkipReason)
					}
					var nv []string
					for _, u := range d.Updates {
						nv = append(nv, u.NewValue)
					}
					got[key] = strings.Join(nv, ",")
				}
			}
		}
		return got
	}
	t.Fatalf("Renovate's log has no \"packageFiles with updates\" record\n%s", tail(log))
	return nil
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func show(m map[string]string) string {
	var lines []string
	for k, v := range m {
		if v == "" {
			v = "(none)"
		}
		lines = append(lines, "  "+k+" -> "+v)
	}
	sort.Strings(lines)
	return "\n" + strings.Join(lines, "\n")
}

// tail is the end of Renovate's log, for a failure message.
func tail(out []byte) string {
	const max = 8000
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return string(out)
}

// packageDemo packages the test chart demo as version v.
func packageDemo(t *testing.T, dir, v string) string {
	t.Helper()
	ch, err := loader.Load(chartsrc.ChartDir("demo"))
	if err != nil {
		t.Fatal(err)
	}
	ch.Metadata.Version = v
	path, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatalf("packaging demo %s: %v", v, err)
	}
	return path
}

// pushImage stores a minimal OCI image (an empty config, no layers) under
// each tag, through the registry's HTTP API as any client pushes.
func pushImage(t *testing.T, host, name string, tags ...string) {
	t.Helper()
	config := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	digest := fmt.Sprintf("sha256:%x", sha256.Sum256(config))
	base := "http://" + host + "/v2/" + name
	resp := do(t, http.MethodPost, base+"/blobs/uploads/", "", nil, http.StatusAccepted)
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, "http") {
		loc = "http://" + host + loc
	}
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	do(t, http.MethodPut, loc+sep+"digest="+digest, "application/octet-stream", config, http.StatusCreated)
	manifest := fmt.Sprintf(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":%q,"size":%d},"layers":[]}`, digest, len(config))
	for _, tag := range tags {
		do(t, http.MethodPut, base+"/manifests/"+tag, "application/vnd.oci.image.manifest.v1+json", []byte(manifest), http.StatusCreated)
	}
}

func do(t *testing.T, method, url, ctype string, body []byte, want int) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %s %s", method, url, resp.Status, msg)
	}
	return resp
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=khook-test", "-c", "user.email=test@khook.invalid", "commit", "-q", "-m", "spec"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, string(data))
}

// The preset's overlay managers are its spec managers with another document
// selector and file pattern: the queries after the selector must not drift
// apart.
func TestPresetOverlayManagersMirrorSpecManagers(t *testing.T) {
	var preset struct {
		CustomManagers []struct {
			Description  string   `json:"description"`
			MatchStrings []string `json:"matchStrings"`
		} `json:"customManagers"`
	}
	readJSON(t, filepath.Join(citest.RepoRoot(), "renovate", "khook.json"), &preset)
	const spec, overlay = `$[apiVersion = "khook.io/v1"]`, `$[$not($exists(apiVersion))]`
	bodies := map[string][]string{}
	for _, m := range preset.CustomManagers {
		if len(m.MatchStrings) != 1 {
			t.Fatalf("manager %q: one query per manager (Renovate 39 drops a manager's every match when one of its queries matches nothing)", m.Description)
		}
		q := m.MatchStrings[0]
		switch {
		case strings.HasPrefix(q, spec):
			bodies["spec"] = append(bodies["spec"], strings.TrimPrefix(q, spec))
		case strings.HasPrefix(q, overlay):
			bodies["overlay"] = append(bodies["overlay"], strings.TrimPrefix(q, overlay))
		default:
			t.Errorf("manager %q selects documents neither as a spec nor as an overlay: %s", m.Description, q)
		}
	}
	if len(bodies["spec"]) != 3 || strings.Join(bodies["spec"], "\n") != strings.Join(bodies["overlay"], "\n") {
		t.Errorf("the overlay managers' queries differ from the spec managers':\nspec:    %q\noverlay: %q", bodies["spec"], bodies["overlay"])
	}
}
