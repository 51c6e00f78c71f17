package cluster

import "syscall"

// sysProcAttr puts a component in its own process group (so stop reaches its
// children) and kills it when the parent thread dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
