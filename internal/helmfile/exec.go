package helmfile

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
)

// runCommand is helmfile's exec, run only with Options.AllowExec.
func runCommand(dir string, envs map[string]any, command string, args []any, inputs []string) (string, error) {
	strArgs := make([]string, len(args))
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			return "", fmt.Errorf("exec %s: argument %d is a %T, not a string", command, i, a)
		}
		strArgs[i] = s
	}
	cmd := exec.Command(command, strArgs...)
	cmd.Dir = dir
	if envs != nil {
		cmd.Env = os.Environ()
		for k, v := range envs {
			cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%v", k, v))
		}
	}
	if len(inputs) > 0 {
		cmd.Stdin = bytes.NewBufferString(inputs[0])
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("exec %s: %v: %s", command, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return string(out), nil
}
