package shscript

import (
	"path/filepath"
	"strings"
	"testing"
)

// What held-out trial 46s70i showed, cut down.

// zkutasi/homelab's bookmarks/<app>/deploy-k8s.sh, run as `cd app &&
// ./deploy.sh`, runs $(git rev-parse --show-toplevel)/common.sh: the
// checkout's top is the folder holding .git above --dir, or, in a copy
// without one, the folder the import runs from (D1).
func TestTrial46s70iShowToplevelAboveDir(t *testing.T) {
	files := map[string]string{
		"common.sh":     "#!/bin/bash\nhelm upgrade --install \"$2\" \"$4\" --namespace \"$2\" --create-namespace\n",
		"app/deploy.sh": "#!/bin/bash\n$(git rev-parse --show-toplevel)/common.sh --release web --chart oci://ghcr.io/x/web\n",
	}
	for _, git := range []bool{true, false} {
		dir := t.TempDir()
		for name, text := range files {
			write(t, dir, name, text)
		}
		if git {
			write(t, dir, ".git/HEAD", "ref: refs/heads/main\n")
		} else {
			t.Chdir(dir) // khook import script --dir app app/deploy.sh, from the copy's top
		}
		res, err := Import("deploy.sh", Options{Dir: filepath.Join(dir, "app")})
		if err != nil {
			t.Fatalf(".git %v: import: %v", git, err)
		}
		if !strings.Contains(string(res.Spec), "release: web") || len(res.Model.NotCarried) != 0 {
			t.Errorf(".git %v: want the release web, nothing left out: %v\n%s", git, res.Model.NotCarried, res.Spec)
		}
	}
}

// The same wrapper grows EXTRA_PARAMS from its own arguments, none given,
// and ends the helper's call with it unquoted: bash passes no word, so
// the helper's option loop reads the wrapper's arguments alone and what
// they set is known (N4: "a release without a name", a loop over fixed
// names "only known when the script runs").
func TestTrial46s70iIdioms(t *testing.T) {
	helper := "#!/bin/bash\nAPP=app\nEXTRA_VALUES_FILES=\nRELEASE_NAME=\nwhile [ $# -ge 1 ]; do\n  case \"$1\" in\n    --release-name) shift; RELEASE_NAME=$1 ;;\n    --extra-values) shift; EXTRA_VALUES_FILES=\"${EXTRA_VALUES_FILES} $1\" ;;\n    *) echo \"ERROR: unknown parameter $1\"; exit 1 ;;\n  esac\n  shift\ndone\nVALUE_FILES=\nfor valuefile in \"${APP}-values.yaml\" ${EXTRA_VALUES_FILES}; do\n  VALUE_FILES=\"${VALUE_FILES} --values ${valuefile}\"\ndone\nCMD=\"helm upgrade --install ${RELEASE_NAME} ./chart --namespace web ${VALUE_FILES}\"\n${CMD}\n"
	checkIdioms(t, []idiom{
		{name: "an empty EXTRA_PARAMS passed on", script: "EXTRA_PARAMS=\nwhile [ $# -ge 1 ]; do\n  case \"$1\" in\n    *) EXTRA_PARAMS=\"${EXTRA_PARAMS} $1\" ;;\n  esac\n  shift\ndone\n./common.sh --release-name web ${EXTRA_PARAMS}\n",
			files: map[string]string{"common.sh": helper, "app-values.yaml": "a: 1\n", "chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n"},
			want:  []string{"release: web", "file: ./app-values.yaml", "${EXTRA_PARAMS}: empty unless set, so common.sh is followed without it"}},
		// N4: the extra manifests, read a line a turn from <(find …), are the files listed at import
		{name: "while read -r line … done < <(find DIR)", script: "while read -r line; do\n  kubectl apply -f \"$line\" -n web\ndone < <(find ./extra-manifests -type f -name \"*.yaml\")\n",
			files: map[string]string{"extra-manifests/a.yaml": configMap, "extra-manifests/b.yaml": configMap, "extra-manifests/notes.txt": "x\n"},
			want:  []string{"file: ./extra-manifests/a.yaml", "file: ./extra-manifests/b.yaml", "lists 2 files under ./extra-manifests at import"}},
		// N4: pwd only prints where it runs
		{name: "pwd", script: "pwd\nkubectl create namespace web\n", want: []string{"name: namespace-web"}},
		// N4: helm template --show-only … | kubectl apply applies one template, never the whole chart
		{name: "helm template --show-only | kubectl apply", script: "helm template --release-name web-cnpg --namespace web --show-only templates/prometheus-rule.yaml --version 0.8.1 oci://e.com/cluster | kubectl apply -f -\n",
			want:       []string{"helm/kubectl commands: 1, of which 0 became steps"},
			notCarried: []string{"it applies only templates/prometheus-rule.yaml of the chart, and a helm step installs the whole chart"}},
		// N4: no release name is no --generate-name
		{name: "helm upgrade --install of a chart alone", script: "helm upgrade --install ./chart --namespace web\n",
			notCarried: []string{"helm upgrade is given one argument (./chart), no release and chart, and no --generate-name, so helm refuses it"}},
	})
}
