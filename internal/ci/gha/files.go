package gha

import (
	"fmt"
	"os"
	"strings"
)

// FormatKeyValue formats one entry of GITHUB_OUTPUT or GITHUB_ENV. Every
// value uses the heredoc form name<<DELIM / value / DELIM with a random
// delimiter that occurs in neither the name nor the value, so no value can
// end the entry early or inject another one (file-command.ts
// prepareKeyValueMessage).
func FormatKeyValue(name, value string) (string, error) {
	if name == "" || strings.ContainsAny(name, "\r\n=") || strings.Contains(name, "<<") {
		return "", fmt.Errorf("output name %q is not usable in a GitHub file command: it must be non-empty without newlines, '=' or '<<'", name)
	}
	delim := "ghadelimiter_" + RandomToken(name, value)
	return name + "<<" + delim + "\n" + value + "\n" + delim + "\n", nil
}

// AppendFile appends text to a file command file (GITHUB_OUTPUT, GITHUB_ENV,
// GITHUB_STEP_SUMMARY): the runner creates it, steps append to it.
func AppendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("cannot open the GitHub Actions file %s: %w", path, err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("cannot write the GitHub Actions file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot write the GitHub Actions file %s: %w", path, err)
	}
	return nil
}

// ParseKeyValues reads a GITHUB_OUTPUT/GITHUB_ENV file the way the runner
// does: name=value lines and name<<DELIM heredocs. Tests use it to check
// what khook wrote; the last value of a name wins, as on the runner.
func ParseKeyValues(text string) (map[string]string, error) {
	out := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		eq := strings.Index(l, "=")
		hd := strings.Index(l, "<<")
		if eq >= 0 && (hd < 0 || eq < hd) {
			out[l[:eq]] = l[eq+1:]
			continue
		}
		if hd < 0 {
			return nil, fmt.Errorf("line %d %q is neither name=value nor name<<DELIMITER", i+1, l)
		}
		name, delim := l[:hd], l[hd+2:]
		if delim == "" {
			return nil, fmt.Errorf("line %d: empty heredoc delimiter for %q", i+1, name)
		}
		var val []string
		closed := false
		for i++; i < len(lines); i++ {
			if lines[i] == delim {
				closed = true
				break
			}
			val = append(val, lines[i])
		}
		if !closed {
			return nil, fmt.Errorf("heredoc for %q is not closed by %q", name, delim)
		}
		out[name] = strings.Join(val, "\n")
	}
	return out, nil
}
