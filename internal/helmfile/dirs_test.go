package helmfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A folder given as the file is what helmfile v1.8.0 makes of --file DIR
// (pkg/app findDesiredStateFiles): every *.y*ml and *.y*ml.gotmpl file in
// it, in name order; a helmfiles: entry naming a folder likewise.
func TestImportFolderAsFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.d/00-crds.yaml":        "releases:\n  - name: crds\n    namespace: infra\n    chart: ../charts/app\n",
		"helmfile.d/10-apps.yaml.gotmpl": "helmfiles:\n  - path: ../more\nreleases:\n  - name: app\n    namespace: apps\n    chart: ../charts/app\n    values: [{tier: {{ \"gold\" }}}]\n",
		"helmfile.d/README.md":           "not a state file\n",
		"more/a.yml":                     "releases:\n  - name: more-a\n    namespace: apps\n    chart: ../charts/app\n",
		"more/helmfile.yaml":             "releases:\n  - name: more-b\n    namespace: apps\n    chart: ../charts/app\n",
		"charts/app/Chart.yaml":          "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	})
	for _, arg := range []string{"helmfile.d", "./helmfile.d/", "."} {
		res, err := Import(dir, arg, Options{})
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		var names []string
		for _, r := range res.Releases {
			names = append(names, r.Resolved.Name)
		}
		// A helmfiles: folder holds two states, helmfile.yaml among them.
		if d := cmp.Diff([]string{"crds", "more-a", "more-b", "app"}, names); d != "" {
			t.Errorf("%s: releases (-want +got):\n%s", arg, d)
		}
		if res.Verdict() != Faithful {
			t.Errorf("%s: verdict %s\n%s", arg, res.Verdict(), res.Spec)
		}
	}
}

// A file of the folder that fails is named with its line, as helmfile
// names it ("in helmfile.d/10-apps.yaml.gotmpl: ...").
func TestImportFolderNamesTheFailingFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.d/00-crds.yaml":        "releases:\n  - name: crds\n    chart: ../charts/app\n",
		"helmfile.d/10-apps.yaml.gotmpl": "releases:\n  - name: app\n    chart: ../charts/app\n    version: {{ .Values.app.version }}\n",
		"charts/app/Chart.yaml":          "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	})
	for _, arg := range []string{"helmfile.d", "."} {
		_, err := Import(dir, arg, Options{})
		var ie *InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "helmfile.d/10-apps.yaml.gotmpl:4: ") {
			t.Errorf("%s: got %v, want an error at helmfile.d/10-apps.yaml.gotmpl:4", arg, err)
		}
	}
}

// Run without --file, helmfile refuses a folder with both a helmfile.yaml
// and a helmfile.d (or both helmfile.yaml and helmfile.yaml.gotmpl); an
// empty folder holds no helmfile either way.
func TestImportFolderConflicts(t *testing.T) {
	for _, tc := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"helmfile.yaml": "releases: []\n", "helmfile.d/a.yaml": "releases: []\n"},
			".: both helmfile.yaml and helmfile.d are in this folder, and helmfile run here without --file refuses to choose between them: name the one to import"},
		{map[string]string{"helmfile.yaml": "releases: []\n", "helmfile.yaml.gotmpl": "releases: []\n"},
			".: both helmfile.yaml and helmfile.yaml.gotmpl are in this folder, and helmfile run here without --file refuses to choose between them: name the one to import"},
		{map[string]string{"README.md": "x\n"},
			".: no helmfile in this folder: neither helmfile.yaml, helmfile.yaml.gotmpl nor helmfile.d/ (what helmfile reads run here), nor a *.yaml, *.yml, *.yaml.gotmpl or *.yml.gotmpl file (what helmfile --file reads of a folder)"},
	} {
		dir := t.TempDir()
		write(t, dir, tc.files)
		_, err := Import(dir, ".", Options{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("got  %v\nwant %s", err, tc.want)
		}
	}
}
