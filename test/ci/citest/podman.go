package citest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/khook/khook/test/needtool"
)

// Podman runs podman with its own storage under a temp dir, the runc
// runtime and cgroupfs, and a containers.conf without default ulimits: what
// works on these machines (no Docker, no registry).
type Podman struct {
	t testing.TB
	// Args are the global flags every podman command of this instance needs.
	Args []string
	// Env is the environment with CONTAINERS_CONF set.
	Env []string
}

// NewPodman skips the test, saying what to install, when podman, runc or
// root is missing.
func NewPodman(t testing.TB) *Podman {
	t.Helper()
	needtool.Path(t, "podman", "this test runs containers with it (apt-get install -y podman runc)")
	runc := "/usr/sbin/runc"
	if _, err := os.Stat(runc); err != nil {
		needtool.Missing(t, "runc", "runc is not installed at /usr/sbin/runc (apt-get install -y runc): this test runs containers with it")
	}
	if os.Geteuid() != 0 {
		needtool.Missing(t, "root", "this test runs podman as root")
	}
	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		t.Skipf("the image tests build linux/amd64 images; this is %s/%s", runtime.GOOS, runtime.GOARCH)
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
	p := &Podman{t: t,
		Args: []string{"--root", filepath.Join(dir, "root"), "--runroot", runroot,
			"--storage-driver", "vfs", "--runtime", runc, "--cgroup-manager=cgroupfs"},
		Env: append(os.Environ(), "CONTAINERS_CONF="+conf),
	}
	t.Cleanup(func() {
		// Containers a tool left running (act keeps a failed job's), and
		// the conmon processes of their exec sessions, which podman 4.3's
		// Docker API leaves behind: they hold mounts in dir.
		p.Run("rm", "--all", "--force", "--time", "0")
		killProcessesNaming(dir, runroot)
		unmountUnder(dir)
		os.RemoveAll(runroot)
	})
	return p
}

// killProcessesNaming kills the processes whose command line names one of
// paths (this instance's storage): only what this test's podman started.
func killProcessesNaming(paths ...string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		cmdline, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, p := range paths {
			if strings.Contains(string(cmdline), p+"/") {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
				if proc, err := os.FindProcess(pid); err == nil && pid != os.Getpid() {
					proc.Kill()
				}
				break
			}
		}
	}
}

// unmountUnder unmounts what is still mounted under dir (a container's shm).
func unmountUnder(dir string) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			syscall.Unmount(f[4], syscall.MNT_DETACH)
		}
	}
}

// Run runs a podman command (five minutes at most) and returns its
// combined output and exit code.
func (p *Podman) Run(args ...string) (string, int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", append(append([]string{}, p.Args...), args...)...)
	cmd.Env = p.Env
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("podman %s: %v", strings.Join(args, " "), err)
	}
	return string(out), code
}

// Wrapper writes an executable that runs this podman instance with its
// flags and configuration, for tools that take a container command
// (gitlab-ci-local's --container-executable).
func (p *Podman) Wrapper(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "podman")
	script := "#!/bin/sh\nexport CONTAINERS_CONF=" + shellQuote(envValue(p.Env, "CONTAINERS_CONF")) +
		"\nexec podman " + strings.Join(quoteAll(p.Args), " ") + " \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Stage returns a Dockerfile's stage named target ("" for the last one),
// its FROM line first, comments and blank lines left out.
func Stage(t testing.TB, dockerfile, target string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(RepoRoot(), dockerfile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stage, found []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(strings.ToUpper(line), "FROM ") {
			if target != "" && stage != nil && strings.HasSuffix(strings.ToLower(stage[0]), " as "+target) {
				found = stage
			}
			stage = nil
		}
		stage = append(stage, line)
	}
	if target == "" {
		return stage
	}
	if stage != nil && strings.HasSuffix(strings.ToLower(stage[0]), " as "+target) {
		found = stage
	}
	if found == nil {
		t.Fatalf("%s has no stage named %s", dockerfile, target)
	}
	return found
}

// BuildImage builds a Dockerfile stage ("" for the final one) for
// linux/amd64 with the binary built outside (the Dockerfile's flags) and
// the host's CA bundle: a Containerfile generated from the stage, each COPY
// --from=<stage> source staged into the context. Dockerfile.release copies
// the binary GoReleaser built from $TARGETPLATFORM/khook in the context,
// which is where it is staged. A stage FROM busybox gets the static busybox
// of Debian's busybox-static package instead (no registry is reachable).
func BuildImage(t testing.TB, p *Podman, dockerfile, target string) string {
	t.Helper()
	stage := Stage(t, dockerfile, target)
	ctxDir := t.TempDir()
	const platform = "linux/amd64"
	sources := map[string]func(dst string) error{
		"/out/khook": func(dst string) error { return copyFile(StaticKhook(t), dst, 0o755) },
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
		if i == 0 && strings.HasPrefix(strings.ToLower(f[1]), "busybox:") {
			busyboxRootfs(t, filepath.Join(ctxDir, "busybox"))
			cf = append(cf, "FROM scratch", "COPY busybox /")
			continue
		}
		if strings.EqualFold(f[0], "COPY") && len(f) == 3 && f[1] == "$TARGETPLATFORM/khook" {
			if err := os.MkdirAll(filepath.Join(ctxDir, platform), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := copyFile(StaticKhook(t), filepath.Join(ctxDir, platform, "khook"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if strings.EqualFold(f[0], "COPY") && len(f) == 4 && strings.HasPrefix(f[1], "--from=") {
			stage := filepath.Join(ctxDir, "src"+string(rune('a'+i)))
			make, ok := sources[f[2]]
			if !ok {
				t.Fatalf("the image build does not know how to stage %s (%s: %s)", f[2], dockerfile, l)
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
	name := dockerfile
	if target != "" {
		name += "-" + target
	}
	tag := fmt.Sprintf("localhost/khook-test-%s:%d", strings.ToLower(strings.NewReplacer(".", "-", "/", "-").Replace(name)), time.Now().UnixNano())
	if out, code := p.Run("build", "-q", "--platform", platform, "--build-arg", "TARGETPLATFORM="+platform, "-t", tag, ctxDir); code != 0 {
		t.Fatalf("podman build of %s %s failed (%d):\n%s", dockerfile, target, code, out)
	}
	return tag
}

// busyboxRootfs lays out /bin/busybox from Debian's busybox-static with a
// link per applet, and /tmp, as the busybox image has them.
func busyboxRootfs(t testing.TB, dir string) {
	t.Helper()
	const bb = "/bin/busybox"
	if _, err := os.Stat(bb); err != nil {
		needtool.Missing(t, "busybox", "busybox is not installed at /bin/busybox (apt-get install -y busybox-static): the GitLab job image's shell comes from it")
	}
	for _, d := range []string{"bin", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(bb, filepath.Join(dir, "bin", "busybox"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bb, "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(dir, "bin", applet)); err != nil {
			t.Fatal(err)
		}
	}
}

// RootfsImage builds an image of host programs (bash, rsync, coreutils: what
// the Debian packages on this machine installed) with the shared libraries
// they load, for tools that need a helper or job container and would pull
// one from a registry.
func RootfsImage(t testing.TB, p *Podman, name string, programs ...string) string {
	t.Helper()
	ctxDir := t.TempDir()
	root := filepath.Join(ctxDir, "rootfs")
	for _, d := range []string{"tmp", "root", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "group"), []byte("root:x:0:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, prog := range programs {
		path := needtool.Path(t, prog, "the "+name+" image is built from this machine's packages")
		files[path] = true
		out, err := exec.Command("ldd", path).Output()
		if err != nil {
			continue // static
		}
		for _, l := range strings.Split(string(out), "\n") {
			for _, f := range strings.Fields(l) {
				if strings.HasPrefix(f, "/") {
					files[f] = true
				}
			}
		}
	}
	for f := range files {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(real)
		if err != nil {
			t.Fatal(err)
		}
		// Programs go to /bin and /usr/bin both (/bin is a link on Debian,
		// scripts name either).
		dsts := []string{f}
		if strings.HasPrefix(f, "/usr/bin/") || strings.HasPrefix(f, "/bin/") {
			dsts = []string{"/bin/" + filepath.Base(f), "/usr/bin/" + filepath.Base(f)}
		}
		for _, dst := range dsts {
			if err := os.MkdirAll(filepath.Join(root, filepath.Dir(dst)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := copyFile(real, filepath.Join(root, dst), info.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		}
	}
	cf := "FROM scratch\nCOPY rootfs /\nENV PATH=/usr/bin:/bin\nCMD [\"/bin/bash\"]\n"
	if err := os.WriteFile(filepath.Join(ctxDir, "Containerfile"), []byte(cf), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := "localhost/khook-test-" + name + ":latest"
	if out, code := p.Run("build", "-q", "-t", tag, ctxDir); code != 0 {
		t.Fatalf("podman build of the %s image failed (%d):\n%s", name, code, out)
	}
	return tag
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shellQuote(s)
	}
	return out
}
