package fleet

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// ChangedFiles lists, as absolute paths, the files git says changed from
// commit from to commit to ("": to the working tree, committed or not), in
// the repository holding dir ("": the working directory). khook fleet
// matrix --changed-since and khook ci's changed-only both ask it.
func ChangedFiles(dir, from, to string) ([]string, error) {
	git := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("git %s failed: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
		}
		return out.String(), nil
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	args := []string{"diff", "--name-only", "--no-renames", from}
	if to != "" {
		args = append(args, to)
	}
	names, err := git(append(args, "--")...)
	if err != nil {
		return nil, err
	}
	root := strings.TrimSpace(top)
	var out []string
	for _, n := range strings.Split(names, "\n") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, filepath.Join(root, filepath.FromSlash(n)))
		}
	}
	return out, nil
}
