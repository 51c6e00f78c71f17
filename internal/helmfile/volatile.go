package helmfile

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/khook/khook/internal/importer"
)

// Volatile functions give another value each time helmfile renders: the
// clock (MinBZK's job suffix `now | unixEpoch`, made to be new on every
// install) and sprig's random generators. An import renders once, so the
// spec would reuse the import's value on every apply: that is said at the
// call's line, as what was not carried. A random value under a
// secret-looking key is not written anyway (the credential rule).
var volatileFuncs = map[string]string{
	"now": "clock", "ago": "clock",
	"randAlphaNum": "random", "randAlpha": "random", "randNumeric": "random", "randAscii": "random",
	"randBytes": "random", "randInt": "random", "uuidv4": "random", "shuffle": "random",
	"bcrypt": "random", "htpasswd": "random", "encryptAES": "random",
	"genPrivateKey": "random", "genCA": "random", "genCAWithKey": "random",
	"genSelfSignedCert": "random", "genSelfSignedCertWithKey": "random",
	"genSignedCert": "random", "genSignedCertWithKey": "random",
}

// volatileMemo makes the import's renderings agree: the n-th call of a
// function with the same arguments gives, in every rendering of one
// import (the try with placeholders, the one without, the second
// rendering that finds what derives from a secret), what it gave first,
// so a random value is not taken for one derived from a secret.
type volatileMemo struct {
	mu   sync.Mutex
	outs map[string][][]reflect.Value
}

// volatileUse is one call of a volatile function, at its line.
type volatileUse struct {
	fn, file string
	line     int
	taken    bool // said on a release already
}

// volatile wraps the volatile functions of f, for rendering file: each
// call is remembered (render places it) and its result memoized across
// the import.
func (r *renderer) volatile(f template.FuncMap, file string) {
	if r.opts.memo == nil {
		r.opts.memo = &volatileMemo{}
	}
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	for name := range volatileFuncs {
		fn, ok := f[name]
		if !ok {
			continue
		}
		v := reflect.ValueOf(fn)
		f[name] = reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value {
			if r.vary > 0 {
				r.seen++
				if r.seen == r.vary {
					return otherValue(v, args)
				}
			} else {
				r.uses = append(r.uses, &volatileUse{fn: name})
			}
			parts := []string{file, name}
			for _, a := range args {
				parts = append(parts, fmt.Sprint(a.Interface()))
			}
			key := strings.Join(parts, "\x00")
			n := r.calls[key]
			r.calls[key]++
			m := r.opts.memo
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.outs == nil {
				m.outs = map[string][][]reflect.Value{}
			}
			if n < len(m.outs[key]) {
				return m.outs[key][n]
			}
			var out []reflect.Value
			if v.Type().IsVariadic() {
				out = v.CallSlice(args)
			} else {
				out = v.Call(args)
			}
			m.outs[key] = append(m.outs[key], out)
			return out
		}).Interface()
	}
}

// otherValue is a call of v that gives another value than the import's:
// a fresh random one, or a time a year on.
func otherValue(v reflect.Value, args []reflect.Value) []reflect.Value {
	var out []reflect.Value
	if v.Type().IsVariadic() {
		out = v.CallSlice(args)
	} else {
		out = v.Call(args)
	}
	if t, ok := out[0].Interface().(time.Time); ok {
		out[0] = reflect.ValueOf(t.AddDate(1, 0, 0))
	}
	return out
}

// maxVaried bounds the runs again of one template: past it (a loop of
// random calls) every call is taken to matter.
const maxVaried = 8

// dropUnused forgets the calls since mark that do not change t's output
// (`env "X" | default (randAlphaNum 16)` with X set calls it for
// nothing): t runs again with each call in turn giving another value, and
// what those runs read and counted is forgotten.
func (r *renderer) dropUnused(mark int, before map[string]int, t *template.Template, data any, out string) {
	n := len(r.uses) - mark
	if r.vary > 0 || n == 0 || n > maxVaried {
		return
	}
	keep := r.uses[:mark]
	for i, u := range r.uses[mark:] {
		if r.differs(t, data, out, i+1, before) {
			keep = append(keep, u)
		}
	}
	r.uses = keep
}

// differs runs t again with its call number i giving another value and
// the others what they gave (before: the call counts t began with).
func (r *renderer) differs(t *template.Template, data any, out string, i int, before map[string]int) bool {
	reads, probes, uses := len(r.reads), len(r.probes), len(r.uses)
	calls := r.calls
	r.calls = maps.Clone(before)
	r.vary, r.seen = i, 0
	var b bytes.Buffer
	err := t.Execute(&b, data)
	r.vary = 0
	r.reads, r.probes, r.uses, r.calls = r.reads[:reads], r.probes[:probes], r.uses[:uses], calls
	return err != nil || b.String() != out
}

// placeUses gives the calls since mark the file and line of their use in
// t's text (whose first line is 1+lineOffset): the k-th call of a
// function is taken for its k-th use in the text, the last for any more
// (a loop).
func (r *renderer) placeUses(mark int, t *template.Template, file string, lineOffset int, text string) {
	nth := map[string]int{}
	for _, u := range r.uses[mark:] {
		if u.file != "" {
			continue // a nested tpl placed it
		}
		u.file, u.line = file, lineOffset+1
		k := nth[u.fn]
		nth[u.fn]++
		if t.Tree == nil {
			continue
		}
		var at []parse.Pos
		findIdents(t.Tree.Root, u.fn, &at)
		if len(at) == 0 {
			continue
		}
		pos := at[min(k, len(at)-1)]
		if int(pos) <= len(text) {
			u.line = lineOffset + 1 + strings.Count(text[:pos], "\n")
		}
	}
}

// findIdents appends the positions of the calls of the function name in n,
// in text order.
func findIdents(n parse.Node, name string, at *[]parse.Pos) {
	switch n := n.(type) {
	case *parse.IdentifierNode:
		if n.Ident == name {
			*at = append(*at, n.Pos)
		}
	case *parse.ListNode:
		if n != nil {
			for _, c := range n.Nodes {
				findIdents(c, name, at)
			}
		}
	case *parse.ActionNode:
		findIdents(n.Pipe, name, at)
	case *parse.PipeNode:
		if n != nil {
			for _, c := range n.Cmds {
				findIdents(c, name, at)
			}
		}
	case *parse.CommandNode:
		for _, c := range n.Args {
			findIdents(c, name, at)
		}
	case *parse.ChainNode:
		findIdents(n.Node, name, at)
	case *parse.IfNode:
		findBranch(&n.BranchNode, name, at)
	case *parse.RangeNode:
		findBranch(&n.BranchNode, name, at)
	case *parse.WithNode:
		findBranch(&n.BranchNode, name, at)
	case *parse.TemplateNode:
		findIdents(n.Pipe, name, at)
	}
}

func findBranch(b *parse.BranchNode, name string, at *[]parse.Pos) {
	findIdents(b.Pipe, name, at)
	findIdents(b.List, name, at)
	findIdents(b.ElseList, name, at)
}

// volatileWhy says what a call of fn means for the spec.
func volatileWhy(fn string) string {
	if volatileFuncs[fn] == "clock" {
		return "helmfile reads the clock on every run, and the import read it once: every apply would reuse the import's value; give it as a khook variable (--set NAME=$(date +%s)) where it must change"
	}
	return "helmfile makes a new random value on every run, and the import made one: every apply would reuse it (a credential among them is a secret variable, never written); give it as a khook variable where it must change"
}

// volatileNotes says each call of a volatile function not said on a
// release, once per line.
func (c *converter) volatileNotes() {
	said := map[string]bool{}
	for _, u := range c.r.uses {
		key := fmt.Sprintf("%s:%d:%s", u.file, u.line, u.fn)
		if u.taken || said[key] {
			continue
		}
		said[key] = true
		c.res.NotCarried = append(c.res.NotCarried, Note{Loc: importer.Loc{File: u.file, Line: u.line}, What: "`" + u.fn + "`", Why: volatileWhy(u.fn)})
	}
}

// volatileRelease says on release r the calls since mark (its values
// template's).
func (c *converter) volatileRelease(r *rel, mark int, file string) {
	said := map[string]bool{}
	for _, u := range c.r.uses[mark:] {
		u.taken = true
		key := fmt.Sprintf("%d:%s", u.line, u.fn)
		if said[key] {
			continue
		}
		said[key] = true
		c.note(r, "values", fmt.Sprintf("values %s:%d `%s`", file, u.line, u.fn), volatileWhy(u.fn))
	}
}
