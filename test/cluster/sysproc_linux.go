package cluster

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// sysProcAttr puts a component in its own process group (so stop reaches its
// children) and kills it when the parent thread dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// Pdeathsig fires when the thread that forked the child exits, not the
// process, and Go ends threads whose locked goroutine returns. Starting every
// component from one locked goroutine that never returns ties the components
// to the test binary's life only.
var (
	spawnOnce sync.Once
	spawnReq  = make(chan func())
)

func startCmd(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: this thread lives as long as the process
			for f := range spawnReq {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	spawnReq <- func() { errc <- cmd.Start() }
	return <-errc
}
