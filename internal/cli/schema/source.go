package schema

import "errors"

// schemaJSON returns the schema document.
// TODO(spec.Schema): return spec.Schema(), nil once the spec package exports it.
func schemaJSON() ([]byte, error) {
	return nil, errors.New("the JSON Schema is not built into this khook yet")
}
