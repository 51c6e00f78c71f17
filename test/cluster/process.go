package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// process is one control-plane component the harness started.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	err     error         // exit status, valid once done is closed
	// expectExit is set when a test stops the process on purpose (restart.go).
	expectExit atomic.Bool
}

// startProcess runs bin with args in its own process group, output to
// <logDir>/<name>.log. The child gets SIGKILL if the test binary dies
// (Pdeathsig, Linux), so a crashed test never leaves a control plane behind.
func startProcess(logDir, name, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("khook test cluster: cannot create the %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := startCmd(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("khook test cluster: cannot start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	pgid := p.cmd.Process.Pid // Setpgid makes the pid the group id
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Reap anything the component left in its group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Clusters still running get stopped when the test binary is interrupted;
// the default action of SIGINT would skip that and leave them running.
var (
	liveMu       sync.Mutex
	live         = map[*Cluster]struct{}{}
	signalsSetUp bool
)

func track(c *Cluster) {
	liveMu.Lock()
	defer liveMu.Unlock()
	live[c] = struct{}{}
	if signalsSetUp {
		return
	}
	signalsSetUp = true
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-ch
		fmt.Fprintf(os.Stderr, "khook test cluster: %v received, stopping the control plane\n", sig)
		liveMu.Lock()
		cs := make([]*Cluster, 0, len(live))
		for c := range live {
			cs = append(cs, c)
		}
		liveMu.Unlock()
		for _, c := range cs {
			c.Stop()
		}
		os.Exit(1)
	}()
}

func untrack(c *Cluster) {
	liveMu.Lock()
	defer liveMu.Unlock()
	delete(live, c)
}
