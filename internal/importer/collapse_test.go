package importer

import (
	"reflect"
	"testing"
)

// A note said again (a retry loop's sixty turns) is one line with its
// count, in the header and in the import's messages alike.
func TestCollapse(t *testing.T) {
	a := Note{Loc: Loc{File: "x.sh", Line: 35}, What: "curl http://127.0.0.1:8080", Why: "khook runs no shell commands"}
	b := Note{Loc: Loc{File: "x.sh", Line: 40}, What: "sleep 3"}
	var got []string
	for _, c := range Collapse([]Note{a, b, a, a}) {
		got = append(got, c.String())
	}
	want := []string{"x.sh:35: curl http://127.0.0.1:8080: khook runs no shell commands (×3)", "x.sh:40: sleep 3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
