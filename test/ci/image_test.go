package ci

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/test/ci/citest"
)

// podman runs podman with its own storage under dir, the runc runtime and
// cgroupfs, and a containers.conf without default ulimits: what works on
// these machines (no Docker, no registry).
type podman struct {
	t    *testing.T
	args []string
	env  []string
}

func newPodman(t *testing.T) *podman {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not installed (apt-get install -y podman runc): the image test needs it")
	}
	runc := "/usr/sbin/runc"
	if _, err := os.Stat(runc); err != nil {
		t.Skip("runc is not installed at /usr/sbin/runc (apt-get install -y runc): the image test needs it")
	}
	if os.Geteuid() != 0 {
		t.Skip("the image test runs podman as root")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "containers.conf")
	if err := os.WriteFile(conf, []byte("[containers]\ndefault_ulimits = []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// podman refuses a runroot longer than 50 characters.
	runroot, err := os.MkdirTemp("", "kp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runroot) })
	return &podman{t: t,
		args: []string{"--root", filepath.Join(dir, "root"), "--runroot", runroot,
			"--storage-driver", "vfs", "--runtime", runc, "--cgroup-manager=cgroupfs"},
		env: append(os.Environ(), "CONTAINERS_CONF="+conf),
	}
}

func (p *podman) run(args ...string) (string, int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", append(append([]string{}, p.args...), args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("podman %s: %v", strings.Join(args, " "), err)
	}
	return string(out), code
}

// finalStage returns a Dockerfile's last stage and checks the rules
// GitHub and GitLab put on it.
func finalStage(t *testing.T, dockerfile string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(citest.RepoRoot(), dockerfile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stage []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(strings.ToUpper(line), "FROM ") {
			stage = nil
		}
		stage = append(stage, line)
	}
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
	return stage
}

// buildImage builds a Dockerfile's final stage FROM scratch for
// linux/amd64 with the binary built outside (the Dockerfile's flags) and the
// host's CA bundle: a Containerfile generated from the Dockerfile, each COPY
// --from=<stage> source staged into the context. Dockerfile.release copies
// the binary GoReleaser built from $TARGETPLATFORM/khook in the context,
// which is where it is staged.
func buildImage(t *testing.T, p *podman, dockerfile string) string {
	t.Helper()
	stage := finalStage(t, dockerfile)
	ctxDir := t.TempDir()
	const platform = "linux/amd64"
	if runtime.GOOS+"/"+runtime.GOARCH != platform {
		t.Skipf("the image test builds %s images; this is %s/%s", platform, runtime.GOOS, runtime.GOARCH)
	}
	sources := map[string]func(dst string) error{
		"/out/khook": func(dst string) error { return copyFile(citest.StaticKhook(t), dst, 0o755) },
		"/etc/ssl/certs/ca-certificates.crt": func(dst string) error {
			return copyFile("/etc/ssl/certs/ca-certificates.crt", dst, 0o644)
		},
		"/out/tmp": func(dst string) error {
			if err := os.Mkdir(dst, 0o755); err != nil {
				return err
			}
			return os.Chmod(dst, 0o1777)
		},
	}
	var cf []string
	for i, l := range stage {
		f := strings.Fields(l)
		if strings.EqualFold(f[0], "COPY") && len(f) == 3 && f[1] == "$TARGETPLATFORM/khook" {
			if err := os.MkdirAll(filepath.Join(ctxDir, platform), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := copyFile(citest.StaticKhook(t), filepath.Join(ctxDir, platform, "khook"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if strings.EqualFold(f[0], "COPY") && len(f) == 4 && strings.HasPrefix(f[1], "--from=") {
			stage := filepath.Join(ctxDir, "src"+string(rune('a'+i)))
			make, ok := sources[f[2]]
			if !ok {
				t.Fatalf("the image test does not know how to stage %s (Dockerfile: %s)", f[2], l)
			}
			if err := make(stage); err != nil {
				t.Fatal(err)
			}
			l = "COPY " + filepath.Base(stage) + " " + f[3]
		}
		cf = append(cf, l)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "Containerfile"), []byte(strings.Join(cf, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := "localhost/khook-ci-test:" + gha.RandomToken()[:12]
	if out, code := p.run("build", "-q", "--platform", platform, "--build-arg", "TARGETPLATFORM="+platform, "-t", tag, ctxDir); code != 0 {
		t.Fatalf("podman build failed (%d):\n%s", code, out)
	}
	t.Cleanup(func() { p.run("rmi", "-f", tag) })
	return tag
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
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
	p := newPodman(t)
	image := buildImage(t, p, dockerfile)

	// 1. As GitHub runs a container action: default user (root), the
	// workspace and file-command directory mounted, workspace as workdir.
	ws, fc := t.TempDir(), t.TempDir()
	copyTestdata(t, ws)
	if out, code := p.run("run", "--rm", image, "version"); code != 0 || !strings.Contains(out, "khook") {
		t.Fatalf("khook version as root: exit %d\n%s", code, out)
	}
	out, code := p.run("run", "--rm", "--workdir", "/github/workspace",
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
	if out, code := p.run(append(nonRoot, image, "version")...); code != 0 {
		t.Fatalf("khook version as uid 10001 read-only: exit %d\n%s", code, out)
	}
	out, code = p.run(append(nonRoot, "--workdir", "/builds/acme/infra", "-v", proj+":/builds/acme/infra",
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
