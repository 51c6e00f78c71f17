// Package helmfilecorpus checks `khook import helmfile` against helmfile
// itself on the corpus of real bootstrap helmfiles in
// test/testdata/helmfile-corpus (see its README.md): for every input that
// the pinned helmfile CLI can build without the network, each release must
// come out of the imported spec with helmfile's name, namespace, chart,
// version, needs and merged values.
package helmfilecorpus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/cli"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/helmfilecli"
)

// corpusDir is the corpus, relative to this package.
const corpusDir = "../testdata/helmfile-corpus"

// comparedDir is the corpus TestImportMatchesHelmfile compares: corpusDir,
// or the folder KHOOK_HELMFILE_CORPUS names (a held-out trial kept outside
// the repository, in the same format), so that such a trial runs this very
// comparison rather than a copy of it.
func comparedDir() string {
	if d := os.Getenv("KHOOK_HELMFILE_CORPUS"); d != "" {
		return d
	}
	return corpusDir
}

// entry is one repository of the corpus (corpus.yaml).
type entry struct {
	Dir     string            `yaml:"dir"`
	Inputs  []string          `yaml:"inputs"`
	Licence string            `yaml:"licence"`
	Env     map[string]string `yaml:"env"` // what the repository's task files set besides ROOT_DIR
	// Environment is the --environment (-e) the task files pass both
	// tools; AllowExec passes the import --allow-exec (helmfile's exec
	// runs without a flag).
	Environment string `yaml:"environment"`
	AllowExec   bool   `yaml:"allowExec"`
}

func loadCorpus(t testing.TB) []entry {
	t.Helper()
	return loadCorpusAt(t, corpusDir)
}

func loadCorpusAt(t testing.TB, dir string) []entry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "corpus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []entry
	if err := yaml.Unmarshal(data, &entries); err != nil {
		t.Fatalf("corpus.yaml: %v", err)
	}
	return entries
}

// resolved is a release as either side resolves it.
type resolved struct {
	Name      string
	Namespace string
	Chart     string // oci://…, a repository URL + "/" + name, or an absolute path
	Version   string
	Needs     []string // namespace/name, sorted
	Installed bool
	Values    map[string]any
}

// The corpus has at least 15 repositories, each with its licence, its
// SOURCES.md and every input present.
func TestCorpusIsComplete(t *testing.T) {
	entries := loadCorpus(t)
	if len(entries) < 15 {
		t.Errorf("the corpus has %d repositories, want at least 15", len(entries))
	}
	for _, e := range entries {
		for _, f := range append([]string{"SOURCES.md", "LICENSE"}, e.Inputs...) {
			if _, err := os.Stat(filepath.Join(corpusDir, e.Dir, f)); err != nil {
				t.Errorf("%s: %v", e.Dir, err)
			}
		}
		if e.Licence == "" {
			t.Errorf("%s: corpus.yaml names no licence", e.Dir)
		}
	}
}

// TestImportMatchesHelmfile is the comparison: helmfile build --embed-values
// on one side (its record when fresh, records_test.go), the imported spec
// loaded as `khook apply` loads it (its helm steps' values merged by the
// runner's ValuesLoader) on the other.
func TestImportMatchesHelmfile(t *testing.T) {
	dir := comparedDir()
	hf := &helmfileSource{heldOut: dir != corpusDir}
	if hf.heldOut && *record {
		t.Fatal("-record writes the records of the repository's corpus: unset KHOOK_HELMFILE_CORPUS")
	}
	built, compared, inputs := 0, 0, 0
	for _, e := range loadCorpusAt(t, dir) {
		for _, in := range e.Inputs {
			inputs++
			t.Run(e.Dir+"/"+in, func(t *testing.T) {
				src := filepath.Join(dir, e.Dir)
				root := copyEntry(t, src)
				b := hf.build(t, src, root, in, e)
				err := b.err()
				var want []resolved
				var dangling []string
				if err == nil {
					want, dangling, err = resolveBuild(b.out, root, in)
				}
				if err != nil {
					// Nothing to compare, but an input helmfile refuses
					// (broken upstream) must not import as faithful either.
					if code, verdict := runImport(t, root, in, e); code == 0 {
						t.Errorf("helmfile %s refuses this input (%v), yet the import exits 0 (%s)", helmfilecli.Version, err, verdict)
					} else {
						t.Logf("helmfile %s refuses this input and so does the import (%s): %v", helmfilecli.Version, verdict, err)
					}
					return
				}
				built++
				got, verdict, code, secrets := importResolve(t, root, in, e, want)
				compared++
				if len(dangling) > 0 && code == 0 {
					t.Errorf("the import exits 0, but helmfile's needs name no release (%s): helmfile sync refuses this helmfile, so the import is not faithful (%s)", strings.Join(dangling, ", "), verdict)
				}
				helmReadsValues(want, got)
				for _, rs := range [][]resolved{want, got} {
					for i := range rs {
						rs[i].Values = manifestText(rs[i].Values).(map[string]any)
					}
				}
				if !cmp.Equal(want, got) {
					t.Errorf("the imported spec resolves differently from helmfile (-helmfile +khook; secrets masked):\n%s\nimport said: %s", secrets.diff(want, got), verdict)
				}
			})
		}
	}
	if *record && !t.Failed() && hf.live == inputs {
		hf.removeOrphans(t) // only after a run of every input, not under -run's filter
	}
	t.Logf("%d inputs built by helmfile %s (%d from its records, %d run now), %d compared", built, helmfilecli.Version, hf.recorded, hf.live, compared)
}

// copyEntry copies a corpus repository into a fresh directory: the import
// writes its spec beside the helmfile, and helmfile may write a lock or
// cache there.
func copyEntry(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// env is the environment both sides run with: the variables these
// repositories' task files set (ROOT_DIR, KUBERNETES_DIR), helm's and
// helmfile's state in the test's directories, and every proxy pointed at a
// closed loopback port so that a network attempt fails at once instead of
// leaving the machine.
func env(root string, extra map[string]string) []string {
	home := filepath.Join(filepath.Dir(root), "home")
	vars := []string{
		"ROOT_DIR=" + root,
		"PWD=" + root, // as the shell that runs the task file sets it
		"KUBERNETES_DIR=" + filepath.Join(root, "kubernetes"),
		"HOME=" + home,
		"XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "helm-cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "helm-config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "helm-data"),
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=",
		"http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "no_proxy=",
		"HELMFILE_UPGRADE_NOTICE_DISABLED=true",
		"HELMFILE_CACHE_HOME=" + filepath.Join(filepath.Dir(root), "helmfile-cache"),
		"PATH=" + os.Getenv("PATH"),
	}
	for k, v := range extra {
		vars = append(vars, k+"="+v)
	}
	return vars
}

// The arguments helmfile runs with after its global ones (the records'
// hash covers them).
var (
	listArgs  = []string{"list", "--skip-charts", "--output", "json"}
	buildArgs = []string{"build", "--embed-values"}
)

func helmfileArgs(helm, in string, e entry, args ...string) []string {
	global := []string{"--helm-binary", helm, "--file", in}
	if e.Environment != "" {
		global = append(global, "--environment", e.Environment)
	}
	return append(global, args...)
}

// helmfileBuild runs `helmfile build --embed-values` on root/in: its
// stdout, or why helmfile refused the input.
//
// helmfile v1.8.0's build pulls every OCI chart before it prints the state,
// although it prints nothing of the chart. So that it needs no network, the
// test first asks `helmfile list --skip-charts` (which pulls nothing) for
// each release's chart and version and puts a placeholder chart of that name
// and version where helmfile caches pulled charts; the charts' contents play
// no part in the comparison.
func helmfileBuild(hf, helm, root, in string, e entry) ([]byte, error) {
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(hf, helmfileArgs(helm, in, e, args...)...)
		cmd.Dir = root
		cmd.Env = env(root, e.Env)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("helmfile %s: %v: %s", args[0], err, lastLines(stderr.String(), 3))
		}
		return stdout.Bytes(), nil
	}
	list, err := run(listArgs...)
	if err != nil {
		return nil, err
	}
	if err := seedChartCache(filepath.Join(filepath.Dir(root), "helmfile-cache"), list); err != nil {
		return nil, err
	}
	return run(buildArgs...)
}

// resolveBuild resolves each release of the state helmfile build printed
// as helmfile does at sync: values merged in order (maps deeply, later
// wins), then set/setString.
func resolveBuild(out []byte, root, in string) (_ []resolved, dangling []string, _ error) {
	var rs []resolved
	var docs []*buildDoc
	skipped := map[string]bool{}
	// One document per state (a helmfile.d folder, sub-helmfiles), each
	// after a "#  Source: FILE" comment naming the file its relative paths
	// are relative to.
	for _, doc := range strings.Split("\n"+string(out), "\n---\n") {
		base := filepath.Join(root, filepath.Dir(in))
		if m := sourceLine.FindStringSubmatch(doc); m != nil {
			base = filepath.Dir(m[1])
		}
		var st buildState
		if err := yaml.Unmarshal([]byte(doc), &st); err != nil {
			return nil, nil, fmt.Errorf("cannot read helmfile build's output: %v", err)
		}
		d := &buildDoc{source: filepath.Join(base, "?")}
		if m := sourceLine.FindStringSubmatch(doc); m != nil {
			d.source = m[1]
		}
		for _, h := range st.Helmfiles {
			d.helmfiles = append(d.helmfiles, h.Path)
		}
		if strings.TrimSpace(doc) != "" {
			docs = append(docs, d)
		}
		for _, r := range st.Releases {
			// helmfile build prints a release whose condition is false, but
			// helmfile sync skips it: neither installed nor deleted, so the
			// import writes no step for it.
			enabled, err := conditionEnabled(r.Condition, st.RenderedValues)
			if err != nil {
				return nil, nil, fmt.Errorf("release %s: %v", r.Name, err)
			}
			if !enabled {
				skipped[r.Name] = true
				continue
			}
			if st.Namespace != "" {
				r.Namespace = st.Namespace
			}
			d.rels = append(d.rels, len(rs))
			rs = append(rs, st.resolve(r, base))
		}
	}
	orderNeeds(rs, docs)
	// A need of a skipped release: helmfile sync goes on without it, and
	// the import drops it with a warning.
	for i := range rs {
		rs[i].Needs = slices.DeleteFunc(rs[i].Needs, func(n string) bool { return skipped[n[strings.LastIndexByte(n, '/')+1:]] })
	}
	rs, dangling = normalize(rs)
	return rs, dangling, nil
}

// conditionEnabled is helmfile v1.8.0's reading of a release's condition
// (pkg/state ConditionEnabled): none, or "true", is enabled, "false" is
// not; else a path foo.enabled into the state's values, each map on the
// way there (an error if not), enabled only where the value is a boolean
// true.
func conditionEnabled(cond string, values map[string]any) (bool, error) {
	switch strings.ToLower(cond) {
	case "", "true":
		return true, nil
	case "false":
		return false, nil
	}
	keys := strings.Split(cond, ".")
	if keys[len(keys)-1] != "enabled" {
		return false, fmt.Errorf("condition %s: helmfile wants the form 'foo.enabled'", cond)
	}
	at := ""
	for _, k := range keys[:len(keys)-1] {
		at += "." + k
		v, ok := values[k]
		if !ok {
			return false, fmt.Errorf("condition %s: environment values field '%s' not found", cond, at)
		}
		if values, ok = v.(map[string]any); !ok {
			return false, fmt.Errorf("condition %s: environment values field '%s' is not a map", cond, at)
		}
	}
	enabled, _ := values["enabled"].(bool)
	return enabled, nil
}

var sourceLine = regexp.MustCompile(`(?m)^#  Source: (.+)$`)

// seedChartCache puts a placeholder chart for each release of `helmfile
// list --output json` where helmfile v1.8.0 looks for a pulled OCI chart
// (pkg/state getOCIChartPath): HELMFILE_CACHE_HOME, then the chart as the
// release writes it (oci://… or repo/name of an oci: true repository) with
// ":", "//" and "." replaced by "_" as path elements, then the version,
// then the chart. The list does not say which repositories are OCI, so
// every chart that is not a local path is seeded; helmfile pulls no other.
func seedChartCache(cache string, list []byte) error {
	var releases []struct{ Chart, Version string }
	if err := json.Unmarshal(list, &releases); err != nil {
		return fmt.Errorf("cannot read helmfile list's output: %v", err)
	}
	escape := strings.NewReplacer(":", "_", "//", "_", ".", "_", "&", "_")
	for _, r := range releases {
		if !strings.Contains(r.Chart, "/") || strings.HasPrefix(r.Chart, ".") || strings.HasPrefix(r.Chart, "/") {
			continue
		}
		name := r.Chart[strings.LastIndexByte(r.Chart, '/')+1:]
		dir := filepath.Join(append(append([]string{cache}, strings.Split(escape.Replace(r.Chart), "/")...), r.Version, name)...)
		chart := fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", name, strings.TrimPrefix(r.Version, "v"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(chart), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// buildState is what helmfile build prints of a state.
type buildState struct {
	// Namespace is the file's own namespace:, which helmfile sync puts on
	// each of its releases (v1.8.0 pkg/state ApplyOverrides); build prints
	// the releases without it.
	Namespace    string          `yaml:"namespace"`
	Repositories []buildRepo     `yaml:"repositories"`
	Releases     []*buildRelease `yaml:"releases"`
	Helmfiles    []struct {
		Path string `yaml:"path"`
	} `yaml:"helmfiles"`
	// RenderedValues are the state's .Values, what a release's condition
	// is read from (helmfile v1.8.0 pkg/app: ConditionEnabled(r,
	// resolvedState.Values())).
	RenderedValues map[string]any `yaml:"renderedvalues"`
}

type buildRepo struct {
	Name string `yaml:"name"`
	URL  string `yaml:"url"`
	OCI  bool   `yaml:"oci"`
}

type buildRelease struct {
	Name      string          `yaml:"name"`
	Namespace string          `yaml:"namespace"`
	Chart     string          `yaml:"chart"`
	Version   string          `yaml:"version"`
	Needs     []string        `yaml:"needs"`
	Installed *bool           `yaml:"installed"`
	Condition string          `yaml:"condition"`
	Values    []any           `yaml:"values"`
	Set       []buildSetValue `yaml:"set"`
	SetString []buildSetValue `yaml:"setString"`
	Secrets   []any           `yaml:"secrets"`
	Labels    map[string]any  `yaml:"labels"`
	Raw       map[string]any  `yaml:",inline"`
}

type buildSetValue struct {
	Name  string   `yaml:"name"`
	Value string   `yaml:"value"` // a string in helmfile's SetValue too
	File  string   `yaml:"file"`
	Vals  []string `yaml:"values"`
}

func (st *buildState) resolve(r *buildRelease, base string) resolved {
	out := resolved{Name: r.Name, Namespace: r.Namespace, Version: r.Version, Installed: r.Installed == nil || *r.Installed}
	out.Chart = r.Chart
	if repo, name, ok := strings.Cut(r.Chart, "/"); ok && !strings.HasPrefix(r.Chart, "oci://") && !strings.HasPrefix(r.Chart, ".") && !strings.HasPrefix(r.Chart, "/") {
		for _, rp := range st.Repositories {
			if rp.Name == repo {
				url := strings.TrimSuffix(rp.URL, "/")
				if rp.OCI && !strings.HasPrefix(url, "oci://") {
					url = "oci://" + url
				}
				out.Chart = url + "/" + name
			}
		}
	} else if strings.HasPrefix(r.Chart, ".") {
		out.Chart = filepath.Join(base, r.Chart)
	}
	if out.Chart == r.Chart && !strings.HasPrefix(r.Chart, "oci://") {
		// repo/name naming no repository: helmfile takes a folder there
		// as a local chart (MinBZK's "chart: charts/keycloak").
		if fi, err := os.Stat(filepath.Join(base, r.Chart)); err == nil && fi.IsDir() {
			out.Chart = filepath.Join(base, r.Chart)
		}
	}
	if filepath.IsAbs(out.Chart) {
		// Helm ignores --version for a chart on disk: it installs what
		// the chart's Chart.yaml says, whatever the helmfile wrote.
		out.Version = ""
	}
	for _, n := range r.Needs {
		out.Needs = append(out.Needs, n)
	}
	values := map[string]any{}
	for _, v := range r.Values {
		if m, ok := v.(map[string]any); ok {
			values = merge(values, m)
		}
	}
	out.Values = setValues(values, r.Set, r.SetString, base)
	return out
}

// dateOnly is a YAML date (2024-04-01).
var dateOnly = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// yaml11Bools are the words YAML 1.1 reads as booleans and YAML 1.2 as
// strings.
var yaml11Bools = map[string]bool{"y": true, "yes": true, "on": true, "n": false, "no": false, "off": false}

// helmReadsValues takes helmfile build's reading of a values file for
// what helm reads at the same place, where khook resolves the latter:
//   - "yes" for true: helm reads a values file with YAML 1.1
//     (sigs.k8s.io/yaml), where yes, on and y are booleans, and so does
//     khook; helmfile's build prints the file as it read it, with YAML 1.2
//     (trial 46t: broad's ENABLE_STACKDRIVER: yes; helmfile template gives
//     the chart a bool). An inline value helmfile passes as it read it, a
//     string, which internal/helmfile's TestImportYAML11WordsInline holds
//     the import to;
//   - a date: see below.
func helmReadsValues(want, got []resolved) {
	var walk func(w, g any) any
	walk = func(w, g any) any {
		switch wt := w.(type) {
		case map[string]any:
			if gt, ok := g.(map[string]any); ok {
				for k := range wt {
					wt[k] = walk(wt[k], gt[k])
				}
			}
		case []any:
			if gt, ok := g.([]any); ok && len(gt) == len(wt) {
				for i := range wt {
					wt[i] = walk(wt[i], gt[i])
				}
			}
		case string:
			if b, ok := g.(bool); ok {
				if v, isWord := yaml11Bools[strings.ToLower(wt)]; isWord && v == b {
					return b
				}
			}
			if gs, ok := g.(string); ok && wt == gs+"T00:00:00Z" && dateOnly.MatchString(gs) {
				// from: 2024-04-01: build prints the time it read, helm
				// gets the file's text (helmfile template gives the chart
				// the string "2024-04-01": trial 46zq's Loki schemaConfig)
				return gs
			}
		}
		return w
	}
	for i := range want {
		for j := range got {
			if want[i].Name == got[j].Name && want[i].Namespace == got[j].Namespace {
				walk(want[i].Values, got[j].Values)
			}
		}
	}
}

// importResolve imports root/in with the khook CLI as a user would (in the
// helmfile's folder, --out khook.yaml) and resolves the spec it wrote.
// runImport runs `khook import helmfile` on in as a user would, in its
// folder with the entry's environment: the exit code and its last lines.
func runImport(t *testing.T, root, in string, e entry) (int, string) {
	// helmfile runs with env() alone: HELMFILE_ENVIRONMENT only as the
	// entry sets it, and the import alike.
	t.Setenv("HELMFILE_ENVIRONMENT", "")
	for _, kv := range env(root, e.Env) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Chdir(filepath.Join(root, filepath.Dir(in)))
	ios, _, errOut := iostreams.Test("")
	args := []string{"import", "helmfile", filepath.Base(in), "--out", "khook.yaml"}
	if e.Environment != "" {
		args = append(args, "--environment", e.Environment)
	}
	if e.AllowExec {
		args = append(args, "--allow-exec")
	}
	code := cli.Run(context.Background(), args, ios)
	return code, fmt.Sprintf("exit %d: %s", code, lastLines(errOut.String(), 20))
}

func importResolve(t *testing.T, root, in string, e entry, want []resolved) ([]resolved, string, int, *secrets) {
	dir := filepath.Join(root, filepath.Dir(in))
	code, verdict := runImport(t, root, in, e)
	specFile := filepath.Join(dir, "khook.yaml")
	if _, err := os.Stat(specFile); err != nil {
		t.Fatalf("the import wrote no spec (%s)", verdict)
	}
	secrets, err := readSecrets(specFile, dir, e.Env, importer.SecretLooking)
	if err != nil {
		t.Fatalf("the imported spec's secret variables: %v (%s)", err, verdict)
	}
	// The variables the import declared for the helmfile's environment
	// variables take the values the entry gives helmfile, as a user's task
	// file would set them (KHOOK_SECRET_ for one the spec declares secret).
	environ := os.Environ()
	for k, v := range e.Env {
		environ = append(environ, secrets.prefix(k, importer.SecretLooking)+k+"="+v)
		if secrets.prefix(k, importer.SecretLooking) == "KHOOK_SECRET_" {
			secrets.redactor.Add(v)
		}
	}
	// A secret variable standing for a literal credential takes the value
	// helmfile's build has there, as the user sets it from their file.
	if err := secrets.fromHelmfile(want); err != nil {
		t.Fatal(err)
	}
	// A secret variable standing for a file the helmfile reads ("the
	// content of ca.key, a secret the helmfile reads") takes the file's
	// content, as the user sets it.
	environ = append(environ, secrets.environ...)
	environ = append(environ, undeclaredRepos(t, specFile)...)
	s, err := spec.Load(spec.LoadOptions{Files: []string{specFile}, Environ: environ, Redactor: redact.New()})
	if err != nil {
		t.Fatalf("the imported spec does not load: %v (%s)", err, verdict)
	}
	steps := map[string]*spec.Step{}
	for _, st := range s.Steps {
		steps[st.Name] = st
	}
	loader := chartsource.New(nil, dir, redact.New(), chartsource.Options{}).Values()
	var out []resolved
	for _, st := range s.Steps {
		switch {
		case st.Helm != nil:
			h := st.Helm
			r := resolved{Name: h.Release, Namespace: h.Namespace, Version: h.Version, Installed: true}
			if r.Name == "" {
				r.Name = st.Name
			}
			r.Chart = h.Chart
			switch h.ChartKind() {
			case spec.ChartRepo:
				r.Chart = strings.TrimPrefix(strings.TrimSuffix(h.Repo, "/")+"/"+h.Chart, undeclared)
			case spec.ChartLocal:
				if !filepath.IsAbs(h.Chart) {
					r.Chart = filepath.Join(dir, h.Chart)
				}
				// helmfile installs the folder (a chart, or manifests it makes
				// one of): khook must load it too, not only name it (46z's D4).
				// A folder the input lacks is the input's matter: helmfile's
				// build reads no chart either.
				if _, err := os.Stat(r.Chart); err == nil {
					if _, err := chartsource.LoadLocal(dir, h); err != nil {
						t.Errorf("step %s: its local chart does not load as khook loads it: %v", st.Name, err)
					}
				}
			}
			r.Needs = releaseNeeds(st, steps)
			vals, err := loader.Load(context.Background(), h)
			if err != nil {
				t.Errorf("step %s: the values do not load: %v", st.Name, err)
			}
			r.Values = vals
			out = append(out, r)
		case st.Delete != nil && st.Delete.Release != "":
			out = append(out, resolved{Name: st.Delete.Release, Namespace: st.Delete.Namespace, Values: map[string]any{}})
		}
	}
	out, _ = normalize(out)
	return out, verdict, code, secrets
}

// undeclared is the URL the comparison gives a repository the helmfile
// never declares (importer.RepoVar): helmfile's build names its chart
// REPO/NAME, and so does the import's once this prefix is cut.
const undeclared = "https://undeclared.invalid/"

// undeclaredRepos sets each HELM_REPO_ variable the import declared for
// such a repository to undeclared + its name, as read from its description.
func undeclaredRepos(t *testing.T, specFile string) []string {
	data, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Vars map[string]struct{ Description string } `yaml:"vars"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the imported spec is not YAML: %v", err)
	}
	var out []string
	for name, v := range doc.Vars {
		repo, ok := strings.CutPrefix(v.Description, "the URL of helm repository ")
		if ok && strings.HasPrefix(name, "HELM_REPO_") {
			repo, _, _ = strings.Cut(repo, " ")
			out = append(out, "KHOOK_VAR_"+name+"="+undeclared+repo)
		}
	}
	return out
}

// releaseNeeds is the releases a step waits for: its needs that are helm
// steps, and through any other step it needs (a hook's apply or wait step)
// the releases that step waits for.
func releaseNeeds(st *spec.Step, steps map[string]*spec.Step) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(names []string)
	walk = func(names []string) {
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			dep := steps[n]
			switch {
			case dep == nil:
				out = append(out, "?"+n)
			case dep.Helm != nil:
				rel := dep.Helm.Release
				if rel == "" {
					rel = dep.Name
				}
				out = append(out, dep.Helm.Namespace+"/"+rel)
			default:
				walk(dep.Needs)
			}
		}
	}
	walk(st.Needs)
	return out
}

// normalize sorts releases and needs, resolves helmfile's short needs
// ("name", or a namespace that names no release) by unique release name as
// both sides are meant to, and puts values in JSON form. A need that names
// no release at all is taken out and returned as dangling: helmfile sync
// refuses such a helmfile, and the import must say it did not carry it.
func normalize(rs []resolved) (_ []resolved, dangling []string) {
	// A release without a namespace: helmfile leaves it to helm, which
	// takes the kube context's namespace, else HELM_NAMESPACE, else
	// "default"; env() gives neither tool a kubeconfig or HELM_NAMESPACE,
	// so helm installs it into "default", where a khook helm step without
	// namespace installs it too (the import warns that a context naming
	// another namespace would differ).
	for i := range rs {
		if rs[i].Namespace == "" {
			rs[i].Namespace = "default"
		}
	}
	byName := map[string][]string{}
	for _, r := range rs {
		byName[r.Name] = append(byName[r.Name], r.Namespace+"/"+r.Name)
	}
	ids := map[string]bool{}
	for _, r := range rs {
		ids[r.Namespace+"/"+r.Name] = true
	}
	for i := range rs {
		r := &rs[i]
		var needs []string
		for _, n := range r.Needs {
			parts := strings.Split(n, "/")
			name := parts[len(parts)-1]
			id := n
			if len(parts) >= 2 {
				ns := parts[len(parts)-2]
				if ns == "" {
					ns = "default" // as the release's own, above
				}
				id = ns + "/" + name
			}
			if !ids[id] && len(byName[name]) == 1 {
				id = byName[name][0]
			}
			if !ids[id] {
				dangling = append(dangling, fmt.Sprintf("release %s needs %s", r.Name, n))
				continue
			}
			needs = append(needs, id)
		}
		sort.Strings(needs)
		r.Needs = slices.Compact(needs)
		if r.Values == nil {
			r.Values = map[string]any{}
		}
		r.Values = jsonForm(r.Values)
		if !r.Installed {
			// Not installed is a delete of the release: only its name and
			// namespace matter.
			r.Chart, r.Version, r.Needs, r.Values = "", "", nil, map[string]any{}
		}
	}
	sort.SliceStable(rs, func(i, j int) bool {
		return rs[i].Namespace+"/"+rs[i].Name < rs[j].Namespace+"/"+rs[j].Name
	})
	return rs, dangling
}

// manifestText compares a string of Kubernetes manifests (extraResources:
// |) by what it holds: the import writes a credential in it as a variable
// (a JSON string) and may drop the blanks that end its lines (it says so),
// which change its text, not the objects a chart renders from it.
func manifestText(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = manifestText(x)
		}
	case []any:
		for i, x := range t {
			t[i] = manifestText(x)
		}
	case string:
		docs := yamlDocs(t)
		if !strings.Contains(t, "\n") || len(docs) == 0 {
			return v
		}
		for _, d := range docs {
			if m, ok := d.(map[string]any); !ok || m["apiVersion"] == nil || m["kind"] == nil {
				return v
			}
		}
		b, err := yaml.Marshal(docs)
		if err != nil {
			return v
		}
		return "manifests: " + string(b)
	}
	return v
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
