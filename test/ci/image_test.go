package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/test/ci/citest"
)

// finalStage checks the rules GitHub and GitLab put on a Dockerfile's
// last stage.
func finalStage(t *testing.T, dockerfile string) {
	t.Helper()
	stage := citest.Stage(t, dockerfile, "")
	if len(stage) == 0 || stage[0] != "FROM scratch" {
		t.Fatalf("the final stage must be FROM scratch (no shell), got %q", stage)
	}
	for _, l := range stage {
		word := strings.ToUpper(strings.Fields(l)[0])
		if word == "USER" || word == "WORKDIR" || word == "RUN" {
			t.Errorf("the final stage must not have %s (GitHub runs container actions as root in the mounted workspace): %s", word, l)
		}
		if word == "ENTRYPOINT" && !strings.HasPrefix(l, `ENTRYPOINT ["/`) {
			t.Errorf("ENTRYPOINT must be exec form with an absolute path: %s", l)
		}
	}
}

func TestImageRunsAsGitHubAndAsNonRoot(t *testing.T) {
	for _, dockerfile := range []string{"Dockerfile", "Dockerfile.release"} {
		t.Run(dockerfile, func(t *testing.T) { testImage(t, dockerfile) })
	}
}

// testImage: the image GitHub's action runs (root, workspace mounted) and a
// GitLab job or pod runs (uid 10001, read-only root filesystem). Dockerfile
// is what `docker build` builds from source; Dockerfile.release is what the
// release publishes (GoReleaser copies its binaries in).
func testImage(t *testing.T, dockerfile string) {
	p := citest.NewPodman(t)
	finalStage(t, dockerfile)
	image := citest.BuildImage(t, p, dockerfile, "")

	// 1. As GitHub runs a container action: default user (root), the
	// workspace and file-command directory mounted, workspace as workdir.
	ws, fc := t.TempDir(), t.TempDir()
	copyTestdata(t, ws)
	if out, code := p.Run("run", "--rm", image, "version"); code != 0 || !strings.Contains(out, "khook") {
		t.Fatalf("khook version as root: exit %d\n%s", code, out)
	}
	out, code := p.Run("run", "--rm", "--workdir", "/github/workspace",
		"-v", ws+":/github/workspace", "-v", fc+":/github/file_commands",
		"-e", "GITHUB_ACTIONS=true", "-e", "GITHUB_WORKSPACE=/github/workspace",
		"-e", "GITHUB_OUTPUT=/github/file_commands/output", "-e", "GITHUB_STEP_SUMMARY=/github/file_commands/summary",
		"-e", "INPUT_COMMAND=validate", "-e", "INPUT_FILE=khook.yaml", "-e", "INPUT_VAR-FILE=vars.yaml",
		"-e", "INPUT_COMMENT=never", "-e", "KHOOK_SECRET_DB_TOKEN=s3cret",
		image, "ci")
	if code != 0 {
		t.Fatalf("khook ci as root: exit %d\n%s", code, out)
	}
	data, _ := os.ReadFile(filepath.Join(fc, "output"))
	outs, err := gha.ParseKeyValues(string(data))
	if err != nil || outs["status"] != "ok" {
		t.Errorf("outputs in the mounted file-command directory: %v (%v)\n%s", outs, err, out)
	}

	// 2. As a GitLab job or a Kubernetes pod may run it: a non-root uid, a
	// read-only root filesystem (podman mounts a tmpfs on /tmp) and a HOME
	// it cannot write.
	proj := t.TempDir()
	copyTestdata(t, proj)
	if err := os.Chmod(proj, 0o777); err != nil {
		t.Fatal(err)
	}
	nonRoot := []string{"run", "--rm", "--user", "10001:10001", "--read-only"}
	if out, code := p.Run(append(nonRoot, image, "version")...); code != 0 {
		t.Fatalf("khook version as uid 10001 read-only: exit %d\n%s", code, out)
	}
	out, code = p.Run(append(nonRoot, "--workdir", "/builds/acme/infra", "-v", proj+":/builds/acme/infra",
		"-e", "GITLAB_CI=true", "-e", "CI_PROJECT_DIR=/builds/acme/infra",
		"-e", "KHOOK_COMMAND=validate", "-e", "KHOOK_VAR_FILE=vars.yaml", "-e", "KHOOK_SECRET_DB_TOKEN=s3cret",
		image, "ci")...)
	if code != 0 {
		t.Fatalf("khook ci as uid 10001 read-only: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(proj, ".khook", "junit.xml")); err != nil {
		t.Errorf("the GitLab JUnit report was not written by the non-root run: %v\n%s", err, out)
	}
}
