package script

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/khook/khook/internal/cli"
	"github.com/khook/khook/internal/cli/iostreams"
)

// Every example validates, plans offline and draws its graph, with no
// variables beyond the defaults the example writes.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no examples/*.yaml yet")
	}
	for _, file := range files {
		for _, args := range [][]string{
			{"validate", "-f", file},
			{"plan", "--offline", "-f", file},
			{"graph", "-f", file},
		} {
			ios, _, errOut := iostreams.Test("")
			if code := cli.Run(context.Background(), args, ios); code != 0 {
				t.Errorf("khook %s %s: exit %d\n%s", args[0], filepath.Base(file), code, errOut)
			}
		}
	}
}
