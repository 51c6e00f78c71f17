// Command khook-cluster builds and runs the khook test cluster by hand.
//
//	khook-cluster build    build the control-plane binaries if missing
//	khook-cluster up       start a cluster in the background; print `export KUBECONFIG=...`
//	khook-cluster down     stop the cluster that up started
//	khook-cluster run      run a cluster in the foreground until interrupted
//
// up and down keep their state (pid file, kubeconfig, log) in -run-dir,
// by default <user cache dir>/khook/cluster-run.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/clusterbin"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	runDir := fs.String("run-dir", defaultRunDir(), "directory for the background cluster's pid file, files and log")
	_ = fs.Parse(os.Args[2:])

	var err error
	switch os.Args[1] {
	case "build":
		_, err = clusterbin.EnsureBinaries(context.Background(), os.Stderr)
	case "up":
		err = up(*runDir)
	case "down":
		err = down(*runDir)
	case "run":
		err = run(*runDir, os.Stdout)
	case "serve": // the background half of up; reports readiness on fd 3
		ready := os.NewFile(3, "ready")
		err = run(*runDir, ready)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: khook-cluster build|up|down|run [-run-dir DIR]")
	os.Exit(2)
}

func defaultRunDir() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "khook", "cluster-run")
}

// run starts a cluster, copies its kubeconfig to <runDir>/kubeconfig, writes
// the export line to ready, and stops the cluster on SIGINT or SIGTERM (the
// cluster package stops it too, when its own handler sees the signal first).
func run(runDir string, ready io.Writer) error {
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cluster.Start(ctx, cluster.Options{})
	if err != nil {
		fmt.Fprintf(ready, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " | "))
		return err
	}
	defer c.Stop()
	kubeconfig := filepath.Join(runDir, "kubeconfig")
	b, err := os.ReadFile(c.Kubeconfig)
	if err == nil {
		err = os.WriteFile(kubeconfig, b, 0o600)
	}
	if err != nil {
		return fmt.Errorf("khook-cluster: cannot copy the kubeconfig: %w", err)
	}
	defer os.Remove(kubeconfig)
	fmt.Fprintf(ready, "export KUBECONFIG=%s\n", kubeconfig)
	if f, ok := ready.(*os.File); ok && f != os.Stdout {
		f.Close()
	}
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "khook-cluster: stopping")
	return nil
}

// up starts `serve` detached from the terminal and waits for its first line.
func up(runDir string) error {
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return err
	}
	pidFile := filepath.Join(runDir, "pid")
	if pid, ok := runningPid(pidFile); ok {
		fmt.Fprintf(os.Stderr, "khook-cluster: already running (pid %d)\n", pid)
		fmt.Printf("export KUBECONFIG=%s\n", filepath.Join(runDir, "kubeconfig"))
		return nil
	}
	// Build first, in the foreground, so progress shows in the terminal.
	if _, err := clusterbin.EnsureBinaries(context.Background(), os.Stderr); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(runDir, "khook-cluster.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "serve", "-run-dir", runDir)
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = logFile, logFile, []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlive make and the terminal
	if err := cmd.Start(); err != nil {
		return err
	}
	w.Close()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		return err
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "export ") {
		_ = os.Remove(pidFile)
		if err == nil {
			err = errors.New(strings.TrimPrefix(strings.TrimSpace(line), "error "))
		}
		return fmt.Errorf("khook-cluster: the cluster did not start: %v (log: %s)", err, logPath)
	}
	fmt.Fprintf(os.Stderr, "khook-cluster: running as pid %d; stop it with `make cluster-down`; log: %s\n", cmd.Process.Pid, logPath)
	fmt.Print(line)
	return nil
}

// down stops the background cluster and waits until it has exited.
func down(runDir string) error {
	pidFile := filepath.Join(runDir, "pid")
	pid, ok := runningPid(pidFile)
	if !ok {
		_ = os.Remove(pidFile)
		fmt.Fprintln(os.Stderr, "khook-cluster: no cluster running")
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("khook-cluster: cannot signal pid %d: %w", pid, err)
	}
	if err := awaitExit(pid, 30*time.Second); err != nil {
		return err
	}
	_ = os.Remove(pidFile)
	_ = os.Remove(filepath.Join(runDir, "kubeconfig"))
	fmt.Fprintf(os.Stderr, "khook-cluster: stopped pid %d\n", pid)
	return nil
}

// runningPid reads the pid file and reports whether that process exists.
func runningPid(pidFile string) (int, bool) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, syscall.Kill(pid, 0) == nil
}

// awaitExit waits for a process that is not our child to exit: its pidfd
// becomes readable then.
func awaitExit(pid int, timeout time.Duration) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil // already gone
		}
		return fmt.Errorf("khook-cluster: cannot watch pid %d: %w", pid, err)
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(timeout.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("khook-cluster: cannot wait for pid %d: %w", pid, err)
		}
		if n == 0 {
			return fmt.Errorf("khook-cluster: pid %d still running %s after SIGTERM", pid, timeout)
		}
		return nil
	}
}
