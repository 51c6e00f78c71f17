// Package redact is khook's one redactor: every byte khook prints, writes to a
// CI file, stores in the state record or sends to an API passes through it.
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
// It is safe for concurrent use.
type Redactor struct {
	mu       sync.RWMutex
	secrets  map[string]bool // every registered form
	values   []string        // the values as registered, for ::add-mask::
	replacer *strings.Replacer
}

// New returns an empty redactor.
func New() *Redactor { return &Redactor{secrets: map[string]bool{}} }

// Add registers a secret value and the forms it can take in output: its
// JSON-escaped, URL-escaped and base64 forms, and each line of a multi-line value.
func (r *Redactor) Add(value string) {
	if r == nil || value == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secrets[value] {
		return
	}
	r.values = append(r.values, value)
	for _, f := range forms(value) {
		if f != "" {
			r.secrets[f] = true
		}
	}
	if strings.ContainsAny(value, "\r\n") {
		for _, line := range strings.FieldsFunc(value, func(c rune) bool { return c == '\n' || c == '\r' }) {
			if len(strings.TrimSpace(line)) >= minLineLen {
				for _, f := range forms(line) {
					r.secrets[f] = true
				}
			}
		}
	}
	r.rebuild()
}

func forms(v string) []string {
	js, _ := json.Marshal(v)
	return []string{
		v,
		string(js[1 : len(js)-1]),
		url.QueryEscape(v),
		url.PathEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)),
		base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)),
	}
}

// rebuild makes one replacer, longest secret first, so that a secret that is a
// substring of another never leaves part of the longer one visible.
func (r *Redactor) rebuild() {
	all := make([]string, 0, len(r.secrets))
	for s := range r.secrets {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool {
		if len(all[i]) != len(all[j]) {
			return len(all[i]) > len(all[j])
		}
		return all[i] < all[j]
	})
	pairs := make([]string, 0, 2*len(all))
	for _, s := range all {
		pairs = append(pairs, s, Mask)
	}
	r.replacer = strings.NewReplacer(pairs...)
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
	out := make([]string, 0, len(r.secrets))
	for s := range r.secrets {
		out = append(out, s)
	}
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
	rep := r.replacer
	r.mu.RUnlock()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
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
