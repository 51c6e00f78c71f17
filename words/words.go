// Package words holds the few helpers every sentence khook writes shares,
// so a message reads the same from every room: one line, singular or
// plural.
//
// May import: nothing of khook (the ground floor; layout_test).
package words

import (
	"strconv"
	"strings"
	"time"
)

// OneLine folds s onto one line: runs of spaces and line breaks become one
// space (an API server's or a tool's multi-line message in a sentence).
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Plural is one or many by n.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n with its noun, one or many by n: "1 object", "3 objects".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}

// ShortDuration prints a duration the way specs write it: "2m", "1h30m",
// "1.5s", not "2m0s".
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
