// Package script runs khook's end-to-end CLI scenarios: testdata/*.txtar
// files executed by testscript against the real entry point.
package script

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/khook/khook/internal/cli"
	"github.com/khook/khook/test/reporoot"
	"github.com/khook/khook/test/script/scripttest"
)

var update = flag.Bool("update", false, "rewrite the files that cmp compares stdout with, inside the .txtar archives")

func TestMain(m *testing.M) {
	testscript.RunMain(m, map[string]func() int{"khook": cli.Main})
}

// repoRoot is the module root, for scripts that compare with committed files.
func repoRoot(t *testing.T) string {
	root, err := reporoot.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestScripts(t *testing.T) {
	root := repoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir:           "testdata",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", root)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "schema": // the committed schema exists (it lands with spec.Schema)
				_, err := os.Stat(filepath.Join(root, "docs", "schema", "v1", "khook.json"))
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: scripttest.Cmds,
	})
}
