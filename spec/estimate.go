package spec

import "strings"

// maxEstimatedNodes bounds the parser's work: the YAML parser builds the
// whole node tree (some 250 bytes a node) before the alias-expanding count
// can run, so a flat 4 MiB list would cost hundreds of MiB. A cheap lexical
// scan refuses such documents first.
const maxEstimatedNodes = 2 * maxNodes

// estimateNodes over-approximates how many YAML nodes text holds: it counts
// what can start a node — lines, and outside quotes, comments and block
// scalar bodies: ", [ {", "- " and ": " — so the parser never sees a document
// far over the node budget. Block scalar bodies (after "key: |") are one node.
func estimateNodes(text []byte) int {
	n := 1
	flow := 0         // [ { depth, across lines
	blockIndent := -1 // >= 0: inside a block scalar whose parent line has this indent
	for start := 0; start < len(text); {
		// A line ends at \n, \r\n or a lone \r, as YAML's do (fuzz: "0:\r").
		end := start
		for end < len(text) && text[end] != '\n' && text[end] != '\r' {
			end++
		}
		line := text[start:end]
		start = end + 1
		if end+1 < len(text) && text[end] == '\r' && text[end+1] == '\n' {
			start++
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		if blockIndent >= 0 {
			if indent == len(line) || indent > blockIndent {
				continue // body of the block scalar (or a blank line in it)
			}
			blockIndent = -1
		}
		n++
		var quote byte
		lastToken := byte(0) // last significant byte outside quotes and comments
		prev := byte(0)      // the last non-blank byte before i, outside quotes
		for i := indent; i < len(line); i++ {
			c := line[i]
			if quote != 0 {
				if c == '\\' && quote == '"' {
					i++
				} else if c == quote {
					quote = 0
				}
				lastToken = 0
				continue
			}
			switch c {
			case '#':
				if i == 0 || line[i-1] == ' ' || line[i-1] == '\t' {
					i = len(line) // a comment ends the line
					continue
				}
			case '"', '\'':
				if i == indent || startsNode(line[i-1], prev) {
					quote = c
				}
			case '[', '{':
				flow++
				n += 3 // the collection, and a first entry that may be key and null value
			case ']', '}':
				if flow > 0 {
					flow--
				}
			case ',':
				n += 2 // a flow mapping entry can be a key with an implicit null
			case '-', ':', '?':
				if i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t' {
					n += 2
				}
			}
			switch {
			case (c == '|' || c == '>') && flow == 0 && (i == indent || startsNode(line[i-1], prev)):
				lastToken = '|' // a block scalar header, unless more follows
				// The header may carry indentation and chomping indicators.
				j := i + 1
				for j < len(line) && (line[j] == '-' || line[j] == '+' || (line[j] >= '1' && line[j] <= '9')) {
					j++
				}
				i = j - 1
			case c != ' ' && c != '\t' && c != '\r':
				lastToken = 'x'
			}
			if c != ' ' && c != '\t' && c != '\r' && quote == 0 {
				prev = c
			}
		}
		if lastToken == '|' && quote == 0 && flow == 0 {
			blockIndent = indent
		}
	}
	return n
}

// startsNode reports whether a quote or block scalar header right after
// before (the byte before it) begins a new node: after a flow indicator, or
// after blanks that follow an indicator (key: "v", - 'v'). After blanks
// inside a plain scalar (0 "a) it is part of that scalar: treating it as
// plain text there can only make the estimate count more, never less.
func startsNode(before, prev byte) bool {
	switch before {
	case '[', '{', ',':
		return true
	case ' ', '\t':
		return prev == 0 || strings.IndexByte(":-?,[{", prev) >= 0
	}
	return false
}
