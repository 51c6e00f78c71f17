// Package planfile is khook's saved plan: a versioned JSON document holding
// a live plan with its digests and fingerprint (plan --out), read back by
// show and by apply --plan, which compares it with a fresh plan.
//
// May import: model, spec, redact (no client-go: khook show needs no
// cluster).
package planfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/khook/khook/model"
)

// Format is the version this khook writes and the only one it reads. A
// change an older khook must not ignore (a digest's definition, a field
// the comparison needs) makes a new version; fields added within v1 are
// informational and older readers ignore them.
const Format = "khook.io/plan/v1"

// MaxSize is the largest plan file Read accepts.
const MaxSize = 64 << 20

// File is a saved plan.
type File struct {
	Format       string    `json:"format"`
	KhookVersion string    `json:"khookVersion"`
	Created      time.Time `json:"created"`
	// WouldFail marks a plan that predicts failure: the steps it plans
	// fail. Informational (the steps' actions, which the fingerprint
	// covers, are what apply --plan refuses on).
	WouldFail []string `json:"wouldFail,omitempty"`
	// Plan is the plan as reviewed: its steps, digests and fingerprint.
	Plan *model.Plan `json:"plan"`
}

// New wraps a live plan (Fingerprint and Digests set) for saving.
func New(p *model.Plan, version string, created time.Time) *File {
	f := &File{Format: Format, KhookVersion: version, Created: created.UTC().Truncate(time.Second), Plan: p}
	for _, s := range p.Failing() {
		f.WouldFail = append(f.WouldFail, s.Name)
	}
	return f
}

// Marshal encodes f as saved: indented JSON with a final newline.
func Marshal(f *File) ([]byte, error) {
	if err := check(f); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("cannot encode the plan file: %v", err)
	}
	return append(data, '\n'), nil
}

// Write writes f to w in one Write.
func Write(w io.Writer, f *File) error {
	data, err := Marshal(f)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// Read decodes a plan file, refusing what this khook cannot vouch for: another
// format version, a truncated or corrupted document, or content that does not
// match its fingerprint (an edited file).
func Read(r io.Reader) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the plan file: %v", err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("the plan file is larger than %d MiB: it is not one khook wrote", MaxSize>>20)
	}
	var head struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("the plan file is not valid JSON (%v): it is truncated or corrupted; run khook plan --out again", err)
	}
	switch {
	case head.Format == nil:
		return nil, errors.New("the plan file has no format field: it is not a khook plan file (write one with khook plan --out)")
	case *head.Format != Format:
		return nil, fmt.Errorf("the plan file has format %q; this khook reads only %q: use the khook version that wrote it (see its khookVersion), or run khook plan --out again with this one", *head.Format, Format)
	}
	f := &File{}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("the plan file does not match format %s (%v): it is corrupted; run khook plan --out again", Format, err)
	}
	if err := check(f); err != nil {
		return nil, err
	}
	return f, nil
}

var hexFingerprint = regexp.MustCompile(`^[0-9a-f]{64}$`)

// check holds a file to what Write promises: a live plan whose fingerprint
// is that of its content.
func check(f *File) error {
	p := f.Plan
	switch {
	case f.Format != Format:
		return fmt.Errorf("the plan file has format %q, not %q", f.Format, Format)
	case p == nil:
		return errors.New("the plan file holds no plan: it is corrupted; run khook plan --out again")
	case p.Offline || p.Digests == nil:
		return errors.New("the plan file holds an offline plan (no digests): a plan file needs the cluster; run khook plan --out without --offline")
	case !hexFingerprint.MatchString(p.Fingerprint):
		return errors.New("the plan file has no valid fingerprint: it is corrupted; run khook plan --out again")
	}
	if got := Fingerprint(p); got != p.Fingerprint {
		return fmt.Errorf("the plan file's content does not match its fingerprint %s (recomputed %s): it was edited or corrupted; run khook plan --out again",
			model.ShortFingerprint(p.Fingerprint), model.ShortFingerprint(got))
	}
	return nil
}
