package schema

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
)

// khook schema prints the committed schema byte for byte, even though the
// streams are redacted (the schema's text looks like URL credentials).
func TestSchemaMatchesCommittedFile(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schema", "v1", "khook.json"))
	if err != nil {
		t.Fatal(err)
	}
	ios, out, _ := iostreams.Test("")
	if err := Run(&Options{F: cmdutil.NewFactory(ios)}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("khook schema (%d bytes) differs from docs/schema/v1/khook.json (%d bytes)", out.Len(), len(want))
	}
}

func TestFleetSchemaMatchesCommittedFile(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schema", "v1", "fleet.json"))
	if err != nil {
		t.Fatal(err)
	}
	ios, out, _ := iostreams.Test("")
	if err := Run(&Options{F: cmdutil.NewFactory(ios), Fleet: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("khook schema --fleet (%d bytes) differs from docs/schema/v1/fleet.json (%d bytes)", out.Len(), len(want))
	}
}
