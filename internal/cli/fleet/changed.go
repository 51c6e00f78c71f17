package fleet

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// changedFiles lists the files changed since ref (committed or not), as
// absolute paths, with git.
func changedFiles(ref string) ([]string, error) {
	git := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		cmd := exec.Command("git", args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("--changed-since %s: git %s failed: %v: %s", ref, strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
		}
		return out.String(), nil
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	names, err := git("diff", "--name-only", "--no-renames", ref, "--")
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
