package redact

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// yamlDoubleQuoted is v as YAML's double-quoted style writes it between the
// quotes, escaping as go-yaml's emitter does (sigs.k8s.io/yaml prints
// diffs and plan files with it): a secret with a quote, a tab or a control
// character is printed in this form, not in JSON's. Kept here, stdlib only,
// so the redactor stays a leaf package.
func yamlDoubleQuoted(v string) string {
	var b strings.Builder
	for i, w := 0, 0; i < len(v); i += w {
		r, size := utf8.DecodeRuneInString(v[i:])
		w = size
		if r == utf8.RuneError && size <= 1 {
			b.WriteByte(v[i])
			continue
		}
		if yamlPrintable(r) && r != '"' && r != '\\' && r != '\n' {
			b.WriteRune(r)
			continue
		}
		switch r {
		case 0:
			b.WriteString(`\0`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case 0x1b:
			b.WriteString(`\e`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case 0x85:
			b.WriteString(`\N`)
		case 0xa0:
			b.WriteString(`\_`)
		case 0x2028:
			b.WriteString(`\L`)
		case 0x2029:
			b.WriteString(`\P`)
		default:
			switch {
			case r <= 0xff:
				fmt.Fprintf(&b, `\x%02X`, r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04X`, r)
			default:
				fmt.Fprintf(&b, `\U%08X`, r)
			}
		}
	}
	return b.String()
}

// yamlPrintable is go-yaml's is_printable (which leaves out the runes
// outside the Basic Multilingual Plane, and the line separators).
func yamlPrintable(r rune) bool {
	switch {
	case r == '\n' || (r >= 0x20 && r <= 0x7e):
		return true
	case r >= 0xa0 && r <= 0xd7ff:
		return r != 0x2028 && r != 0x2029
	case r >= 0xe000 && r <= 0xfffd:
		return r != 0xfeff
	}
	return false
}
