// Package gha writes GitHub Actions workflow commands (stdout lines such as
// ::error file=f,line=3::msg) and file commands (GITHUB_OUTPUT, GITHUB_ENV,
// GITHUB_STEP_SUMMARY). It is hand-written because the usual Go library for
// this is not reachable here and khook needs only a handful of commands; the
// formats follow the runner's documentation and @actions/core (command.ts,
// file-command.ts).
//
// May import: the standard library only (nothing of khook).
package gha

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// EscapeData escapes a command's message: %, CR and LF (command.ts escapeData).
func EscapeData(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// EscapeProperty escapes a property value: EscapeData plus ':' and ','
// (command.ts escapeProperty).
func EscapeProperty(s string) string {
	s = EscapeData(s)
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
}

// Property is one key=value of a command, kept in order for stable output.
type Property struct{ Key, Value string }

// Command formats one workflow command line (without the trailing newline):
// ::name key=value,key=value::message. Empty property values are left out.
func Command(name string, props []Property, message string) string {
	var b strings.Builder
	b.WriteString("::")
	b.WriteString(name)
	first := true
	for _, p := range props {
		if p.Value == "" {
			continue
		}
		if first {
			b.WriteByte(' ')
			first = false
		} else {
			b.WriteByte(',')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(EscapeProperty(p.Value))
	}
	b.WriteString("::")
	b.WriteString(EscapeData(message))
	return b.String()
}

// Level is an annotation's severity.
type Level string

const (
	LevelError   Level = "error"
	LevelWarning Level = "warning"
	LevelNotice  Level = "notice"
)

// Annotation is an ::error/::warning/::notice command at a file position.
type Annotation struct {
	Level   Level
	File    string
	Line    int
	Col     int
	Title   string
	Message string
}

// String formats the annotation as a workflow command line.
func (a Annotation) String() string {
	props := []Property{{"file", a.File}}
	if a.Line > 0 {
		props = append(props, Property{"line", fmt.Sprint(a.Line)})
		if a.Col > 0 {
			props = append(props, Property{"col", fmt.Sprint(a.Col)})
		}
	}
	props = append(props, Property{"title", a.Title})
	return Command(string(a.Level), props, a.Message)
}

// Commands writes workflow commands to a step's stdout.
type Commands struct {
	W io.Writer
}

func (c Commands) line(s string) error {
	_, err := io.WriteString(c.W, s+"\n")
	return err
}

// AddMask registers a value with the runner's log masker. The runner masks
// per line, so each line of a multi-line value is registered on its own.
func (c Commands) AddMask(value string) error {
	for _, l := range strings.FieldsFunc(value, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if err := c.line(Command("add-mask", nil, l)); err != nil {
			return err
		}
	}
	return nil
}

// Annotate writes one annotation.
func (c Commands) Annotate(a Annotation) error { return c.line(a.String()) }

// Group opens a collapsible group in the log; EndGroup closes it.
func (c Commands) Group(title string) error { return c.line(Command("group", nil, title)) }

// EndGroup closes the group Group opened.
func (c Commands) EndGroup() error { return c.line("::endgroup::") }

// Untrusted writes text khook did not author (pod logs, chart notes, helm
// errors) between ::stop-commands::TOKEN and ::TOKEN::, so a line in it that
// looks like a workflow command is printed, not obeyed. The token is random
// and chosen so it does not occur in the text.
func (c Commands) Untrusted(text string) error {
	if text == "" {
		return nil
	}
	token := RandomToken(text)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err := io.WriteString(c.W, "::stop-commands::"+token+"\n"+text+"::"+token+"::\n")
	return err
}

// RandomToken returns a random hex token that occurs in none of avoid.
func RandomToken(avoid ...string) string {
	for {
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand never fails since Go 1.24
		tok := hex.EncodeToString(b[:])
		clash := false
		for _, a := range avoid {
			if strings.Contains(a, tok) {
				clash = true
			}
		}
		if !clash {
			return tok
		}
	}
}
