package helmfile

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each hook's steps cite the hook's own line, not the hooks: key (#46).
func TestImportHookStepsCiteTheirHook(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: app
    namespace: apps
    chart: ./charts/app
    hooks:
      - events: [presync]
        command: kubectl
        args: [create, namespace, infra]
      - events: [postsync]
        showlogs: true
        command: kubectl
        args: [label, namespace, infra, team=platform, --overwrite]
`,
		"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	for _, want := range []string{
		"# from helmfile.yaml:6\n  - name: app-pre-1",
		"# from helmfile.yaml:9\n  - name: app-post-2",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("spec lacks %q\n%s", want, spec)
		}
	}
}

// A release without namespace: helmfile leaves it to helm (the kube
// context's namespace); the step is written without one and the import
// says that khook's helm step uses "default" (#46).
func TestImportReleaseWithoutNamespace(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml":         "releases:\n  - name: app\n    chart: ./charts/app\n  - name: gone\n    chart: ./charts/app\n    installed: false\n  - name: set\n    namespace: apps\n    chart: ./charts/app\n",
		"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	if strings.Count(spec, "\n      namespace: ") != 1 {
		t.Errorf("only release set writes a namespace:\n%s", spec)
	}
	notes := map[string]string{}
	for _, r := range res.Releases {
		for _, n := range r.Info {
			notes[r.Resolved.Name] += n.String() + "\n"
		}
	}
	for _, name := range []string{"app", "gone"} {
		if !strings.Contains(notes[name], `release `+name+`: no namespace: helmfile leaves it to helm, which uses the kube context's namespace`) || !strings.Contains(notes[name], `uses "default"`) && !strings.Contains(notes[name], `looks for the release in "default"`) {
			t.Errorf("release %s: notes %q", name, notes[name])
		}
	}
	if notes["set"] != "" {
		t.Errorf("release set has a namespace, yet: %s", notes["set"])
	}
}

// missingFileHandler as helmfile v1.8.0 applies it (pkg/state storage.go
// resolveFile): values take the release's handler, else the helmfile's;
// secrets only the release's own; Warn, Info and Debug skip a missing file,
// Error (or none) refuses, any other value is refused when a file is
// missing (#46).
func TestImportMissingFileHandler(t *testing.T) {
	chart := "apiVersion: v2\nname: app\nversion: 0.1.0\n"
	for _, tc := range []struct {
		name, helmfile, wantErr string
	}{
		{"state Warn skips values", "missingFileHandler: Warn\nreleases:\n  - name: a\n    chart: ./app\n    values: [absent.yaml]\n", ""},
		{"state Debug skips values", "missingFileHandler: Debug\nreleases:\n  - name: a\n    chart: ./app\n    values: [absent.yaml]\n", ""},
		{"release Info skips secrets", "releases:\n  - name: a\n    chart: ./app\n    missingFileHandler: Info\n    secrets: [absent.enc.yaml]\n", ""},
		{"state Warn does not skip secrets", "missingFileHandler: Warn\nreleases:\n  - name: a\n    chart: ./app\n    secrets: [absent.enc.yaml]\n",
			"helmfile.yaml:5: release a: the secrets file absent.enc.yaml cannot be read"},
		{"an unknown handler is refused", "missingFileHandler: warn\nreleases:\n  - name: a\n    chart: ./app\n    values: [absent.yaml]\n",
			`(missingFileHandler "warn" is none of Error, Warn, Info and Debug, so helmfile refuses it too)`},
		{"no handler is Error", "releases:\n  - name: a\n    chart: ./app\n    values: [absent.yaml]\n", "the values file absent.yaml cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{"helmfile.yaml": tc.helmfile, "app/Chart.yaml": chart})
			_, err := Import(dir, "helmfile.yaml", Options{})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("import refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("import error %v, want one with %q", err, tc.wantErr)
			}
		})
	}
}

// helmfile's order of sub-helmfiles (v1.8.0 pkg/app visitStatesWithContext):
// helmfiles: entries one after the other, the files of one glob (or of a
// helmfile.d) in parallel unless --sequential-helmfiles, a file's own
// releases after its sub-helmfiles (#46).
func TestImportSubHelmfileOrder(t *testing.T) {
	rel := func(name string) string {
		return "releases:\n  - name: " + name + "\n    namespace: ns\n    chart: oci://r.example/c\n"
	}
	files := map[string]string{
		"helmfile.yaml":        "helmfiles:\n  - a/helmfile.yaml\n  - path: apps/*/helmfile.yaml\n" + rel("top"),
		"a/helmfile.yaml":      rel("a1"),
		"apps/x/helmfile.yaml": rel("xa"),
		"apps/y/helmfile.yaml": rel("yb"),
		"apps/z/helmfile.yaml": "releases: []\n",
	}
	needs := func(opts Options) map[string]string {
		dir := t.TempDir()
		write(t, dir, files)
		res, err := Import(dir, "helmfile.yaml", opts)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		spec := string(res.Spec)
		for _, name := range []string{"a1", "xa", "yb", "top"} {
			i := strings.Index(spec, "  - name: "+name+"\n")
			block := spec[i+len("  - name: "+name+"\n"):]
			block = block[:strings.Index(block, "    helm:")]
			got[name] = strings.Join(strings.Fields(strings.ReplaceAll(strings.ReplaceAll(block, "needs:", ""), "- ", "")), ",")
		}
		return got
	}
	if d := cmp.Diff(map[string]string{"a1": "", "xa": "a1", "yb": "a1", "top": "xa,yb"}, needs(Options{})); d != "" {
		t.Errorf("needs (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"a1": "", "xa": "a1", "yb": "xa", "top": "yb"}, needs(Options{SequentialHelmfiles: true})); d != "" {
		t.Errorf("needs with --sequential-helmfiles (-want +got):\n%s", d)
	}
}

// version: on a local chart (MinBZK's apps, yoma's helm/ folder): Helm
// ignores --version for a chart on disk, so the release is carried
// faithfully without it, with a note saying what Helm installs (#46).
func TestImportLocalChartVersionDropped(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: same\n    namespace: apps\n    chart: charts/app\n    version: \" 0.1.0\"\n" +
			"  - name: other\n    namespace: apps\n    chart: ./charts/app\n    version: 9.9.9\n",
		"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.Spec), "version:") {
		t.Errorf("a local chart's step has version:\n%s", res.Spec)
	}
	want := map[string]string{
		"same":  "helmfile.yaml:5: release same: version 0.1.0 of the local chart ./charts/app: Helm ignores --version for a chart on disk, so it is not written; its Chart.yaml has the same version",
		"other": "helmfile.yaml:9: release other: version 9.9.9 of the local chart ./charts/app: Helm ignores --version for a chart on disk, so it is not written; its Chart.yaml says 0.1.0, which is what Helm installs",
	}
	for _, rel := range res.Releases {
		if rel.Verdict != Faithful || len(rel.NotCarried) != 0 {
			t.Errorf("release %s: verdict %v, not carried %v; want faithful", rel.Resolved.Name, rel.Verdict, rel.NotCarried)
		}
		var got []string
		for _, n := range rel.Info {
			got = append(got, n.String())
		}
		if !slices.Contains(got, want[rel.Resolved.Name]) {
			t.Errorf("release %s: notes %q lack %q", rel.Resolved.Name, got, want[rel.Resolved.Name])
		}
	}
}

// A helmfile label that is no Kubernetes label (edenlab's bin=/bin, from
// commonLabels) only selected releases: it is left out with a warning and
// the release stays faithful (#46).
func TestImportLabelThatIsNoKubernetesLabelWarns(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml":         "commonLabels:\n  bin: /bin\nreleases:\n  - name: app\n    namespace: apps\n    chart: ./charts/app\n    labels:\n      tier: infra\n",
		"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	rel := res.Releases[0]
	if rel.Verdict != Faithful || len(rel.Info) != 1 || !strings.Contains(rel.Info[0].String(), "labels.bin=/bin: not a Kubernetes label") {
		t.Errorf("verdict %v, info %v; want faithful with the label noted", rel.Verdict, rel.Info)
	}
	if !strings.Contains(string(res.Spec), "tier: infra") || strings.Contains(string(res.Spec), "bin: /bin") {
		t.Errorf("want tier carried and bin not:\n%s", res.Spec)
	}
}
