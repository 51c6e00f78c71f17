//go:build !linux

package cluster

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts a component in its own process group; only Linux can tie
// its life to the parent's.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
