package version

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/internal/cli/cmdutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// release is what a GoReleaser build embeds: stamped identity, and the
// module graph Go records in every binary.
func release() Info {
	info := fromBuild("v0.1.0", "0123456789abcdef0123456789abcdef01234567", "2026-11-22T10:00:00Z", &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/khook/khook", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "helm.sh/helm/v4", Version: "v4.3.1"},
			{Path: "k8s.io/client-go", Version: "v0.37.1"},
			{Path: "k8s.io/api", Version: "v0.37.1"},
		},
	})
	info.Platform = "linux/amd64" // the machine running the test must not matter
	return info
}

func TestVersionOutputGolden(t *testing.T) {
	for _, format := range []string{cmdutil.OutputText, cmdutil.OutputJSON} {
		var buf bytes.Buffer
		if err := write(&buf, format, release()); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "version."+format)
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/cli/version -update to create it)", err)
		}
		if diff := cmp.Diff(string(want), buf.String()); diff != "" {
			t.Errorf("%s differs (-want +got):\n%s", path, diff)
		}
	}
}

// Without stamps (go install, go build): the module version and VCS data,
// and a replaced Helm reports the replacement's version.
func TestFromBuildFallsBackToBuildInfo(t *testing.T) {
	got := fromBuild("", "", "", &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/khook/khook", Version: "v0.2.0"},
		Settings:  []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.time", Value: "2026-01-01T00:00:00Z"}},
		Deps: []*debug.Module{{Path: "helm.sh/helm/v4", Version: "v4.3.1",
			Replace: &debug.Module{Path: "example.com/helm", Version: "v4.3.2-fork"}}},
	})
	want := Info{Version: "v0.2.0", Commit: "abc", BuildDate: "2026-01-01T00:00:00Z", GoVersion: "go1.26.8",
		Platform: got.Platform, HelmVersion: "v4.3.2-fork", ClientGoVersion: "unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if none := fromBuild("", "", "", nil); none.Version != "(devel)" || none.Commit != "unknown" || none.HelmVersion != "unknown" {
		t.Errorf("without build info: %+v", none)
	}
}
