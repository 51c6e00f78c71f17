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
