// Package release tests khook's release configuration with the pinned
// GoReleaser (tools/goreleaser): the configuration is valid, a snapshot build
// stamps the version and commit into `khook version`, and the version named
// by action.yml, the docs and the examples is a release in CHANGELOG.md.
package release

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/filelock"
	"golang.org/x/mod/modfile"
)

var repoRoot = citest.RepoRoot

// goreleaser builds the pinned GoReleaser into the user cache, where `make
// release-tools` puts it (go build leaves an up-to-date binary alone).
func goreleaser(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TOOLS_BIN")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no user cache dir for the pinned GoReleaser: %v", err)
		}
		dir = filepath.Join(cache, "khook", "tools")
	}
	bin := filepath.Join(dir, "goreleaser")
	// A cold build (GoReleaser's dependency graph) takes minutes on 2 cores.
	// -s -w as the Makefile builds it, or this would link again.
	// Under the lock make test's background build (the Makefile's
	// $(GORELEASER)) takes, so the two never compile it at once.
	unlock, err := filelock.Lock(t.Context(), filepath.Join(dir, "goreleaser.lock"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	out, err := run(t, 20*time.Minute, repoRoot(), nil, "go", "build", "-C", "tools/goreleaser", "-ldflags", "-s -w", "-o", bin, "github.com/goreleaser/goreleaser/v2")
	if err != nil {
		t.Fatalf("building the pinned GoReleaser: %v\n%s", err, out)
	}
	return bin
}

func run(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitEnv is what GoReleaser needs from git beyond the checkout: a remote URL.
// A clone without a remote (a local worktree) gets the canonical URL through
// git's environment config, the repository's config untouched.
func gitEnv(t *testing.T) []string {
	t.Helper()
	root := repoRoot()
	if out, err := run(t, time.Minute, root, nil, "git", "rev-parse", "--is-inside-work-tree"); err != nil || strings.TrimSpace(out) != "true" {
		t.Skipf("GoReleaser needs a git checkout; %s is not one (%v)", root, err)
	}
	if out, _ := run(t, time.Minute, root, nil, "git", "remote"); strings.TrimSpace(out) != "" {
		return nil
	}
	return []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=remote.origin.url", "GIT_CONFIG_VALUE_0=https://github.com/khook/khook.git"}
}

func TestGoreleaserCheck(t *testing.T) {
	bin := goreleaser(t)
	if out, err := run(t, 5*time.Minute, repoRoot(), gitEnv(t), bin, "check"); err != nil {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
}

// versionInfo is `khook version -o json`.
type versionInfo struct {
	Version, Commit, BuildDate, GoVersion, Platform, HelmVersion, ClientGoVersion string
}

func TestSnapshotBuildStampsVersion(t *testing.T) {
	bin := goreleaser(t)
	root := repoRoot()
	env := gitEnv(t)
	// The real configuration with dist/ moved to a temp dir, so the test
	// leaves the checkout alone.
	cfg, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dist := filepath.Join(tmp, "dist")
	cfgPath := filepath.Join(tmp, "goreleaser.yaml")
	if err := os.WriteFile(cfgPath, append(cfg, []byte("\ndist: "+dist+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	// A cold khook build with -trimpath takes minutes on a busy 2-core machine;
	// test/ci builds with the same flags (under the same lock, so the two
	// never compile it at once), so usually only the link is left.
	unlock, err := citest.LockBuild(t.Context(), citest.StaticBuild)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, 25*time.Minute, root, env, bin, "build", "--snapshot", "--clean", "--single-target", "--config", cfgPath)
	unlock()
	if err != nil {
		t.Fatalf("goreleaser build --snapshot --single-target: %v\n%s", err, out)
	}
	exe := filepath.Join(dist, "khook_"+runtime.GOOS+"_"+runtime.GOARCH, "khook")
	if matches, _ := filepath.Glob(filepath.Join(dist, "khook_"+runtime.GOOS+"_"+runtime.GOARCH+"*", "khook*")); len(matches) == 1 {
		exe = matches[0]
	}
	out, err = run(t, time.Minute, tmp, nil, exe, "version", "-o", "json")
	if err != nil {
		t.Fatalf("khook version -o json: %v\n%s", err, out)
	}
	var got versionInfo
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("khook version -o json is not JSON: %v\n%s", err, out)
	}

	head, err := run(t, time.Minute, root, nil, "git", "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	head = strings.TrimSpace(head)
	if got.Commit != head {
		t.Errorf("commit %q, want HEAD %s", got.Commit, head)
	}
	// goreleaser's ShortCommit is git's own abbreviation, which grows with the
	// repository (7 hex digits on a small clone, 8 or more later): any prefix
	// of HEAD of at least 7 digits is right.
	want := regexp.MustCompile(`^v\d+\.\d+\.\d+-snapshot\.([0-9a-f]{7,40})$`)
	if m := want.FindStringSubmatch(got.Version); m == nil || !strings.HasPrefix(head, m[1]) {
		t.Errorf("version %q, want a snapshot version matching %s with a prefix of HEAD %s", got.Version, want, head)
	}
	if _, err := time.Parse(time.RFC3339, got.BuildDate); err != nil {
		t.Errorf("buildDate %q is not RFC 3339: %v", got.BuildDate, err)
	}
	mods := goModRequires(t, "")
	if got.HelmVersion != mods["helm.sh/helm/v4"] || got.ClientGoVersion != mods["k8s.io/client-go"] {
		t.Errorf("helm %s, client-go %s; go.mod pins %s and %s", got.HelmVersion, got.ClientGoVersion, mods["helm.sh/helm/v4"], mods["k8s.io/client-go"])
	}
	if got.GoVersion != runtime.Version() || got.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("go %s on %s, want %s on %s/%s", got.GoVersion, got.Platform, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	// Static: no ELF interpreter, so it runs FROM scratch and on any libc.
	if runtime.GOOS == "linux" {
		f, err := elf.Open(exe)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s is dynamically linked (has an ELF interpreter); the release builds with CGO_ENABLED=0", exe)
			}
		}
	}
	// -trimpath: no path of the build machine in the binary.
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(root+string(filepath.Separator))) {
		t.Errorf("the binary contains the checkout path %s; the release builds with -trimpath", root)
	}
}

// goModRequires maps module path to version in the go.mod of dir (a
// folder of the checkout; "" is khook's own). It reads go.mod as the
// toolchain does: a replace with a version (k8s.io/kubernetes pins its
// staging modules that way) wins over the require.
func goModRequires(t *testing.T, dir string) map[string]string {
	t.Helper()
	path := filepath.Join(repoRoot(), dir, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]string{}
	for _, r := range f.Require {
		mods[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		if r.New.Version != "" {
			mods[r.Old.Path] = r.New.Version
		}
	}
	return mods
}
