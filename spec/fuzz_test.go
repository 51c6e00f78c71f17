package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/khook/khook/redact"
)

func FuzzSubstitute(f *testing.F) {
	for _, s := range []string{
		"${A}", "${A:-d}", "${A|upper}", "${A:-d|printf \"%sm\"}", "$${A}", "$2a$10$xyz",
		"${", "${A", "${A:", "${A:-", "${A|", "${ A | lower | trunc 3 }", "a${A}b\n${B:-x}\nc",
		"${A|repeat 3|indent 2}", "${A|b64enc|b64dec}", "$$$$", "${A}${A}${A}", "${A:-a|b|c}",
	} {
		f.Add(s)
	}
	vs := &varSet{vals: map[string]string{"A": "va", "B": "multi\nline"}, secret: map[string]bool{"A": true}, redactor: redact.New()}
	pipes := newPipelines()
	f.Fuzz(func(t *testing.T, in string) {
		out, pm, probs := substitute("f.yaml", []byte(in), vs, pipes)
		if len(probs) == 0 && !bytes.Contains([]byte(in), []byte("${")) && !bytes.Equal(out, []byte(in)) {
			t.Fatalf("text without ${ changed: %q → %q", in, out)
		}
		// Every output position maps to a position inside the input.
		lines := lineStarts(out)
		for l := 1; l <= len(lines); l++ {
			p := pm.Pos(l, 1)
			if p.Line < 1 || p.Line > len(lineStarts(pm.orig)) || p.Col < 1 {
				t.Fatalf("line %d maps to %v outside the input", l, p)
			}
		}
	})
}

// treeSize counts the nodes the parser built (aliases not expanded).
func treeSize(n *yaml.Node) int {
	size := 1
	for _, c := range n.Content {
		size += treeSize(c)
	}
	return size
}

func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	ex, _ := filepath.Glob("../examples/*.yaml")
	for _, file := range append(files, ex...) {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// The lexical estimate that guards the parser never undercounts.
		var doc yaml.Node
		if yaml.Unmarshal(in, &doc) == nil {
			if n, est := treeSize(&doc), estimateNodes(in); n > est {
				t.Fatalf("estimateNodes = %d, the parser built %d nodes", est, n)
			}
		}
		s, err := Load(LoadOptions{Files: []string{"-"}, Stdin: bytes.NewReader(in), Environ: testEnviron, Redactor: redact.New()})
		if err == nil {
			// A loaded spec is usable by the rest of khook.
			for _, st := range s.Steps {
				_ = Summary(st)
			}
			_ = s.Order()
		}
	})
}
