package spec

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// varName is the shape of a variable name in ${NAME}.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// varRef is one ${...} reference as written in the raw text.
type varRef struct {
	Name       string
	Default    string
	HasDefault bool
	Pipeline   string // empty: no pipeline
	Off        int    // byte offset of the "$" in the raw text
	End        int    // byte offset just past the closing "}"
}

// segment maps a run of substituted output back to the raw text: literal runs
// map byte for byte; a substituted value maps wholly to its "${".
type segment struct {
	out, orig, n int
	literal      bool
}

// posMap translates positions in the substituted text (what the YAML parser
// saw) back to positions in the file as the user wrote it.
type posMap struct {
	file      string
	orig, out []byte
	origLines []int // byte offset of each line start; built on first use
	outLines  []int
	segs      []segment
}

func (m *posMap) lines() ([]int, []int) {
	if m.origLines == nil {
		m.origLines, m.outLines = lineStarts(m.orig), lineStarts(m.out)
	}
	return m.origLines, m.outLines
}

func lineStarts(b []byte) []int {
	starts := []int{0}
	for i, c := range b {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// offsetOf converts a 1-based line and rune column into a byte offset.
func offsetOf(text []byte, lines []int, line, col int) int {
	if line < 1 {
		return 0
	}
	if line > len(lines) {
		return len(text)
	}
	off := lines[line-1]
	for c := 1; c < col && off < len(text) && text[off] != '\n'; c++ {
		_, w := utf8.DecodeRune(text[off:])
		off += w
	}
	return off
}

// lineColOf converts a byte offset into a 1-based line and rune column.
func lineColOf(text []byte, lines []int, off int) (int, int) {
	if off > len(text) {
		off = len(text)
	}
	i := sort.Search(len(lines), func(i int) bool { return lines[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return i + 1, utf8.RuneCount(text[lines[i]:off]) + 1
}

// origOffset maps an offset in the output to the raw text.
func (m *posMap) origOffset(out int) int {
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].out > out }) - 1
	if i < 0 {
		return 0
	}
	s := m.segs[i]
	if !s.literal {
		return s.orig
	}
	d := out - s.out
	if d > s.n {
		d = s.n
	}
	return s.orig + d
}

// Pos maps a parser line/column (in the substituted text) to the raw file.
func (m *posMap) Pos(line, col int) Pos {
	if m == nil || line == 0 {
		return Pos{Line: line, Col: col}
	}
	origLines, outLines := m.lines()
	off := m.origOffset(offsetOf(m.out, outLines, line, col))
	l, c := lineColOf(m.orig, origLines, off)
	return Pos{File: m.file, Line: l, Col: c}
}

// writtenAt reports whether text appears verbatim in the raw file at pos, so
// offsets into text are offsets into the file.
func (m *posMap) writtenAt(pos Pos, text string) bool {
	if pos.File != m.file {
		return false
	}
	origLines, _ := m.lines()
	off := offsetOf(m.orig, origLines, pos.Line, pos.Col)
	return bytes.HasPrefix(m.orig[off:], []byte(text)) && !strings.Contains(text, "\n")
}

// posAt is the position of a raw-text byte offset.
func (m *posMap) posAt(off int) Pos {
	origLines, _ := m.lines()
	l, c := lineColOf(m.orig, origLines, off)
	return Pos{File: m.file, Line: l, Col: c}
}

// scanRefs finds every ${...} in src. $${ is the escape for a literal ${; a $
// not followed by { is literal. A reference ends at the first } on its line.
// emit is called for each literal run (with its raw offset) and each reference;
// bad is called for malformed references.
func scanRefs(src []byte, literal func(off int, b []byte), ref func(r varRef), bad func(off int, msg, hint string)) {
	start := 0 // start of the pending literal run
	flush := func(end int) {
		if end > start {
			literal(start, src[start:end])
		}
	}
	noCloseBefore := -1 // a } search that already failed up to this newline
	for i := 0; i < len(src); i++ {
		if src[i] != '$' || i+1 >= len(src) {
			continue
		}
		if src[i+1] == '$' && i+2 < len(src) && src[i+2] == '{' {
			flush(i)
			literal(i+1, src[i+1:i+3]) // $${ → ${
			i += 2
			start = i + 1
			continue
		}
		if src[i+1] != '{' {
			continue
		}
		flush(i)
		body, end, ok := refBody(src, i+2, &noCloseBefore)
		if !ok {
			bad(i, "unterminated variable reference (no closing \"}\" on the same line)",
				"write $${ for a literal ${")
			literal(i, src[i:i+2])
			i++
			start = i + 1
			continue
		}
		r, msg := parseRef(body)
		if msg != "" {
			bad(i, msg, "references look like ${NAME}, ${NAME:-default}, ${NAME|pipeline}; write $${ for a literal ${")
			literal(i, src[i:end])
		} else {
			r.Off, r.End = i, end
			ref(r)
		}
		i = end - 1
		start = end
	}
	flush(len(src))
}

// refBody returns the text between "${" (at from) and the first "}" on the line.
func refBody(src []byte, from int, noCloseBefore *int) (string, int, bool) {
	if from <= *noCloseBefore {
		return "", 0, false
	}
	for j := from; j < len(src); j++ {
		switch src[j] {
		case '}':
			return string(src[from:j]), j + 1, true
		case '\n':
			*noCloseBefore = j
			return "", 0, false
		}
	}
	*noCloseBefore = len(src)
	return "", 0, false
}

// parseRef splits NAME[:-default][|pipeline]. A default followed by a
// pipeline ends at the first "|"; whitespace around the name is allowed, and
// around a default only when a pipeline follows ("${X:-a | upper}").
func parseRef(body string) (varRef, string) {
	var r varRef
	nameEnd := strings.IndexAny(body, ":|")
	if nameEnd < 0 {
		nameEnd = len(body)
	}
	r.Name = strings.TrimSpace(body[:nameEnd])
	rest := body[nameEnd:]
	if strings.HasPrefix(rest, ":") {
		if !strings.HasPrefix(rest, ":-") {
			return r, fmt.Sprintf("malformed variable reference ${%s}: a default is written ${NAME:-default}", body)
		}
		rest = rest[2:]
		r.HasDefault = true
		if p := strings.IndexByte(rest, '|'); p >= 0 {
			r.Default = strings.TrimSpace(rest[:p])
			rest = rest[p:]
		} else {
			r.Default, rest = rest, ""
		}
	}
	if strings.HasPrefix(rest, "|") {
		r.Pipeline = strings.TrimSpace(rest[1:])
		if r.Pipeline == "" {
			return r, fmt.Sprintf("malformed variable reference ${%s}: empty pipeline after \"|\"", body)
		}
	}
	if !varName.MatchString(r.Name) {
		return r, fmt.Sprintf("malformed variable reference ${%s}: %q is not a variable name (letters, digits and _, not starting with a digit)", body, r.Name)
	}
	return r, ""
}

// inComment reports whether offset off is inside a YAML comment: after a "#"
// that starts the line or follows whitespace, outside quotes, on a line that
// is not the content of a block scalar (there a "#" is text).
func inComment(src []byte, off int, block map[int]bool) bool {
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	if block[start] {
		return false
	}
	return commentAt(src, start, off) >= 0
}

// commentAt is the offset of the "#" that starts a comment on the line from
// start, before end; -1 for none.
func commentAt(src []byte, start, end int) int {
	var quote byte
	for i := start; i < end; i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			if i == start || src[i-1] == ' ' || src[i-1] == '\t' || src[i-1] == '[' || src[i-1] == '{' || src[i-1] == ',' {
				quote = c
			}
		case c == '#' && (i == start || src[i-1] == ' ' || src[i-1] == '\t'):
			return i
		}
	}
	return -1
}

// blockIndicator ends a line that opens a block scalar: "key: |",
// "- >-", "run: |2".
var blockIndicator = regexp.MustCompile(`(^|[ \t])[|>][0-9+-]*$`)

// blockScalarLines marks (by their start offset) the lines that are the
// content of a YAML block scalar: a "#" there is part of the text, and a
// reference there is substituted as anywhere else in a value.
func blockScalarLines(src []byte) map[int]bool {
	lines := map[int]bool{}
	parent := -1 // the indentation a content line must exceed; -1: not in a block
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		line := src[start:end]
		indent := len(line) - len(bytes.TrimLeft(line, " "))
		blank := len(bytes.TrimSpace(line)) == 0
		if parent >= 0 && (blank || indent > parent) {
			lines[start] = true
		} else {
			parent = -1
			text := line
			if c := commentAt(src, start, end); c >= 0 {
				text = src[start:c]
			}
			if text = bytes.TrimRight(text, " \t\r"); blockIndicator.Match(text) {
				// Content is indented past the key: after "- " items,
				// unless the indicator follows the dash itself ("- |").
				parent = indent
				rest := text[indent:]
				for bytes.HasPrefix(rest, []byte("- ")) {
					trimmed := bytes.TrimLeft(rest[2:], " ")
					if blockIndicator.Match(trimmed) && len(trimmed) <= 3 {
						break
					}
					parent += len(rest) - len(trimmed)
					rest = trimmed
				}
			}
		}
		start = end + 1
	}
	return lines
}

// maxOutput bounds the substituted document, so values and pipelines cannot
// grow a small spec into a huge one.
const maxOutput = 16 << 20

// substitute replaces every ${...} in src with its value. Values are data:
// only the pipeline text is evaluated. Every problem is collected; positions
// point at the "${" in the raw text.
func substitute(file string, src []byte, vs *varSet, pipes *pipelines) ([]byte, *posMap, Problems) {
	m := &posMap{file: file, orig: src}
	var out bytes.Buffer
	out.Grow(len(src))
	var probs Problems
	tooBig := false
	put := func(orig int, b []byte, literal bool) {
		if out.Len()+len(b) > maxOutput {
			if !tooBig {
				probs = append(probs, Problem{Pos: m.posAt(orig), Message: fmt.Sprintf("the spec grows past %d MiB after variable substitution", maxOutput>>20)})
			}
			tooBig = true
			return
		}
		m.segs = append(m.segs, segment{out: out.Len(), orig: orig, n: len(b), literal: literal})
		out.Write(b)
	}
	// A comment is not part of the spec: references there are left as
	// written (an imported spec's header may say ${VARIABLES}).
	block := blockScalarLines(src)
	scanRefs(src,
		func(off int, b []byte) { put(off, b, true) },
		func(r varRef) {
			if inComment(src, r.Off, block) {
				put(r.Off, src[r.Off:r.End], true)
				return
			}
			val, ok := vs.lookup(r.Name)
			secret := ok && vs.secret[r.Name]
			if !ok && !r.HasDefault {
				hint := fmt.Sprintf("pass --set %s=..., add it to a --var-file, export %s%s, or write ${%s:-default}; $${%s} keeps it literal", r.Name, vs.varPrefix, r.Name, r.Name, r.Name)
				probs = append(probs, Problem{Pos: m.posAt(r.Off), Message: fmt.Sprintf("variable %s is not set", r.Name), Hint: hint})
				return
			}
			if !ok {
				val = r.Default
			}
			if r.Pipeline != "" {
				res, err := pipes.run(r.Pipeline, val)
				if err != nil {
					probs = append(probs, Problem{Pos: m.posAt(r.Off), Message: fmt.Sprintf("pipeline of ${%s}: %v", r.Name, err),
						Hint: "pipelines use sprig functions, e.g. ${NAME|lower|trunc 63}"})
					return
				}
				if secret {
					vs.redactor.Add(res)
				}
				val = res
			}
			put(r.Off, []byte(val), false)
		},
		func(off int, msg, hint string) {
			if !inComment(src, off, block) {
				probs = append(probs, Problem{Pos: m.posAt(off), Message: msg, Hint: hint})
			}
		})
	m.out = out.Bytes()
	m.origLines = nil // posAt may have indexed the raw text only
	return m.out, m, probs
}
