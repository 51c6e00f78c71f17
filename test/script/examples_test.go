package script

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/cli"
	"github.com/khook/khook/internal/cli/iostreams"
)

// exampleEnviron holds the variables the examples need (as spec's tests).
var exampleEnviron = []string{
	"KHOOK_VAR_CLUSTER_NAME=demo",
	"KHOOK_VAR_ENV=prod",
	"KHOOK_SECRET_REGISTRY_TOKEN=example-token",
	"KHOOK_SECRET_ADMIN_PASSWORD=example-password",
}

// Every example validates, plans offline (text and JSON) and draws its
// graph, and its secrets never show.
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
			{"plan", "--offline", "-o", "json", "-f", file},
			{"graph", "-f", file},
			{"graph", "--format", "dot", "-f", file},
		} {
			ios, out, errOut := iostreams.Test("")
			ios.Environ = exampleEnviron
			if code := cli.Run(context.Background(), args, ios); code != 0 {
				t.Errorf("khook %s %s: exit %d\n%s", args[0], filepath.Base(file), code, errOut)
			}
			if all := out.String() + errOut.String(); strings.Contains(all, "example-token") || strings.Contains(all, "example-password") {
				t.Errorf("khook %s %s printed a secret:\n%s", args[0], filepath.Base(file), all)
			}
		}
	}
}
