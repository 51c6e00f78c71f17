package report

import (
	"bytes"
	"encoding/json"
	"io"
)

// WriteJSON writes v as one indented JSON document in a single Write, so a
// redacting writer sees the whole document at once.
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
