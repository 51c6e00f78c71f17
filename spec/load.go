package spec

import (
	"errors"
	"io"

	"github.com/khook/khook/internal/redact"
)

// LoadOptions says where a spec and its variables come from.
type LoadOptions struct {
	Files        []string  // spec files in order (base, then overlays); "-" is Stdin
	Stdin        io.Reader // read when a file is "-"
	Set          []string  // --set NAME=value, in order (later wins)
	VarFiles     []string  // --var-file paths (flat NAME: value maps)
	Environ      []string  // the environment, os.Environ() form
	VarPrefix    string    // default KHOOK_VAR_
	SecretPrefix string    // default KHOOK_SECRET_
	// Redactor receives every secret value and every pipeline output derived
	// from one, before any error that could quote them is built.
	Redactor *redact.Redactor
}

// Load reads, substitutes, parses, evaluates when: and validates a spec.
// Invalid input returns Problems (every problem at once, with positions);
// other errors (unreadable file) are plain errors.
func Load(opts LoadOptions) (*Spec, error) {
	return nil, errors.New("spec.Load: not implemented yet")
}
