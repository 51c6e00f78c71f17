// Package redact is khook's one redactor: every byte khook prints, writes to a
// CI file, stores in the state record or sends to an API passes through it.
//
// It imports nothing of khook: the ground floor every other package stands
// on (layout_test.go).
package redact

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mask replaces every secret in output.
const Mask = "***"

// minLineLen is the shortest line of a multi-line secret that is masked on its
// own: shorter lines ("}", "-----") would mask ordinary text everywhere.
const minLineLen = 4

// userinfo matches credentials in URLs (scheme://user:pass@host); they are
// stripped whatever their source, as the DSL promises for inline credentials.
// The userinfo may hold only characters RFC 3986 allows there (percent-encoded
// or not), so prose such as "oci://ref[:tag|@digest]" is left alone.
var userinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[a-zA-Z0-9\-._~%!$&'()*+,;=:]+@`)

// Redactor masks registered secrets. The zero value is not usable; use New.
// It is safe for concurrent use, and learns during the run: a value read
// from the cluster mid-run is registered at the cost of its own forms.
type Redactor struct {
	mu     sync.RWMutex
	forms  trie     // every registered form
	values []string // the values as registered, for ::add-mask::
	seen   map[string]bool
	subs   []func(forms []string)
	// notify orders the subscribers' calls as the registrations: it is
	// taken before mu is released, so no later Add overtakes an earlier one.
	notify sync.Mutex
}

// New returns an empty redactor.
func New() *Redactor { return &Redactor{seen: map[string]bool{}} }

// Add registers a secret value and the forms it can take in output: its
// JSON-, YAML- and URL-escaped and base64 forms, and each line of a
// multi-line value of at least minLineLen characters (with their forms).
// Its cost is the value's own forms, whatever is registered already. The
// subscribers learn the new forms before Add returns.
func (r *Redactor) Add(value string) {
	if r == nil || value == "" {
		return
	}
	r.mu.Lock()
	if r.seen[value] {
		r.mu.Unlock()
		return
	}
	r.seen[value] = true
	r.values = append(r.values, value)
	var added []string
	for _, f := range allForms(value) {
		if r.forms.insert(f) {
			added = append(added, f)
		}
	}
	subs := r.subs
	r.notify.Lock()
	r.mu.Unlock()
	defer r.notify.Unlock()
	if len(added) > 0 {
		for _, fn := range subs {
			fn(added)
		}
	}
}

// MinFoundLen is the shortest value read from the cluster that Found
// registers. A shorter one ("1", "on", a port's "80") would mask that text
// everywhere in the output, and is no secret a masker could keep anyway.
const MinFoundLen = minLineLen

// Found registers a value khook read from the cluster (a Secret's data)
// rather than one the user declared secret: values shorter than
// MinFoundLen and boolean words are left out, they are configuration
// flags, and masking them would mask every "true" in a diff.
func (r *Redactor) Found(value string) {
	if len(strings.TrimSpace(value)) < MinFoundLen {
		return
	}
	switch strings.ToLower(value) {
	case "true", "false", "null", "none", "yes":
		return
	}
	r.Add(value)
}

// Subscribe calls fn with every form registered so far, then with the new
// forms of each later Add, synchronously and in registration order, before
// that Add returns: `khook ci` announces each with ::add-mask:: before
// anything that could contain it is printed. fn must not call Add.
func (r *Redactor) Subscribe(fn func(forms []string)) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.subs = append(r.subs, fn)
	r.notify.Lock()
	now := r.formsLocked()
	r.mu.Unlock()
	defer r.notify.Unlock()
	if len(now) > 0 {
		fn(now)
	}
}

// allForms is every form of a value: its own and, for a multi-line value,
// those of each line long enough to be masked on its own.
func allForms(value string) []string {
	out := forms(value)
	if strings.ContainsAny(value, "\r\n") {
		for _, line := range strings.FieldsFunc(value, func(c rune) bool { return c == '\n' || c == '\r' }) {
			if len(strings.TrimSpace(line)) >= minLineLen {
				out = append(out, forms(line)...)
			}
		}
	}
	return out
}

func forms(v string) []string {
	js, _ := json.Marshal(v)
	return []string{
		v,
		string(js[1 : len(js)-1]),
		yamlDoubleQuoted(v),
		strings.ReplaceAll(v, "'", "''"), // YAML single-quoted
		url.QueryEscape(v),
		url.PathEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)),
		base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)),
		base64.RawURLEncoding.EncodeToString([]byte(v)),
	}
}

// Values returns the secrets as registered (not their derived forms), in order.
func (r *Redactor) Values() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.values...)
}

// Forms returns every form masked (each value, its lines and their encoded
// forms), longest first: `khook ci` registers each with GitHub's
// ::add-mask:: so the runner's own log masking covers them too.
func (r *Redactor) Forms() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.formsLocked()
}

func (r *Redactor) formsLocked() []string {
	out := r.forms.all()
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// String masks every secret and every URL credential in s.
func (r *Redactor) String(s string) string {
	s = StripURLCredentials(s)
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.forms.mask(s, Mask)
}

// Error masks an error's text; nil stays nil.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	return redactedError{msg: r.String(err.Error()), cause: err}
}

type redactedError struct {
	msg   string
	cause error
}

func (e redactedError) Error() string { return e.msg }

// Unwrap keeps errors.Is/As working on the cause; its text is never printed
// by khook, only the redacted message.
func (e redactedError) Unwrap() error { return e.cause }

// StripURLCredentials replaces user:password@ in URLs with ***@.
func StripURLCredentials(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
}

// Writer returns a writer that masks secrets before passing bytes to w.
// Callers write whole lines or documents per Write so a secret is never split
// across two calls; Writer buffers nothing, so it never loses output on exit.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &writer{r: r, w: w} }

type writer struct {
	r *Redactor
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, w.r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
