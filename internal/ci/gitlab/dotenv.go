package gitlab

import (
	"fmt"
	"regexp"
	"strings"
)

// GitLab's limits on an artifacts:reports:dotenv file: 5 KiB, and 20
// variables on the smallest plans (newer instances allow more).
const (
	DotenvMaxBytes = 5 * 1024
	DotenvMaxVars  = 20
)

var dotenvKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// DotenvKey turns an output name ("to-install") into a dotenv variable name
// with the given prefix ("KHOOK_TO_INSTALL").
func DotenvKey(prefix, name string) string {
	return prefix + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// Entry is one dotenv variable.
type Entry struct{ Key, Value string }

// Dotenv renders entries as a dotenv report GitLab accepts: KEY=value lines,
// no quotes, comments or blank lines, single-line values (newlines become
// ", "), at most DotenvMaxVars variables and DotenvMaxBytes bytes. A value
// that would push the file over the size limit is cut, with "..." at the end.
func Dotenv(entries []Entry) (string, error) {
	if len(entries) > DotenvMaxVars {
		return "", fmt.Errorf("the dotenv report would hold %d variables; GitLab accepts at most %d", len(entries), DotenvMaxVars)
	}
	var b strings.Builder
	for i, e := range entries {
		if !dotenvKey.MatchString(e.Key) {
			return "", fmt.Errorf("%q is not a dotenv variable name: use ASCII letters, digits and '_'", e.Key)
		}
		v := strings.Join(strings.FieldsFunc(e.Value, func(r rune) bool { return r == '\n' || r == '\r' }), ", ")
		v = strings.TrimSpace(v)
		// Reserve room for the keys still to come, with empty values.
		rest := 0
		for _, r := range entries[i+1:] {
			rest += len(r.Key) + 2
		}
		room := DotenvMaxBytes - 1 - b.Len() - len(e.Key) - 2 - rest
		if len(v) > room {
			if room < 3 {
				room = 3
			}
			v = truncateUTF8(v, room-3) + "..."
		}
		b.WriteString(e.Key + "=" + v + "\n")
	}
	return b.String(), nil
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
