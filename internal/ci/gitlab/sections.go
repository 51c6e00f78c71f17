// Package gitlab writes what GitLab CI reads from a job: collapsible log
// sections, the dotenv report, and merge request notes through the REST API.
//
// May import: internal/ci/sticky and the standard library.
package gitlab

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// badSectionChar is anything GitLab does not accept in a section name
// (letters, digits, '_', '.' and '-' only).
var badSectionChar = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// SectionName turns a step name into a valid section name.
func SectionName(s string) string { return badSectionChar.ReplaceAllString(s, "_") }

// SectionStart writes the escape line that opens a collapsible log section.
// The header is one line: CR and LF in it would break the marker.
func SectionStart(w io.Writer, at time.Time, name, header string, collapsed bool) error {
	opt := ""
	if collapsed {
		opt = "[collapsed=true]"
	}
	header = strings.NewReplacer("\r", " ", "\n", " ").Replace(header)
	_, err := fmt.Fprintf(w, "\x1b[0Ksection_start:%d:%s%s\r\x1b[0K%s\n", at.Unix(), SectionName(name), opt, header)
	return err
}

// SectionEnd writes the escape line that closes the section.
func SectionEnd(w io.Writer, at time.Time, name string) error {
	_, err := fmt.Fprintf(w, "\x1b[0Ksection_end:%d:%s\r\x1b[0K\n", at.Unix(), SectionName(name))
	return err
}
