package gha

import (
	"bytes"
	"strings"
	"testing"
)

func TestEscaping(t *testing.T) {
	if got, want := EscapeData("50% done\r\nnext: a,b"), "50%25 done%0D%0Anext: a,b"; got != want {
		t.Errorf("EscapeData = %q, want %q", got, want)
	}
	if got, want := EscapeProperty("a:b,c%\n"), "a%3Ab%2Cc%25%0A"; got != want {
		t.Errorf("EscapeProperty = %q, want %q", got, want)
	}
}

func TestAnnotation(t *testing.T) {
	a := Annotation{Level: LevelError, File: "specs/k,hook.yaml", Line: 12, Col: 5, Title: "step cilium: failed", Message: "timed out\nafter 5m: 100%"}
	want := "::error file=specs/k%2Chook.yaml,line=12,col=5,title=step cilium%3A failed::timed out%0Aafter 5m: 100%25"
	if got := a.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := (Annotation{Level: LevelWarning, Message: "m"}).String(), "::warning::m"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := (Annotation{Level: LevelNotice, File: "f", Col: 3, Message: "m"}).String(), "::notice file=f::m"; got != want {
		t.Errorf("col without line must be dropped: got %s, want %s", got, want)
	}
}

func TestAddMaskPerLine(t *testing.T) {
	var b bytes.Buffer
	if err := (Commands{W: &b}).AddMask("line one\r\n\nline%two\n"); err != nil {
		t.Fatal(err)
	}
	want := "::add-mask::line one\n::add-mask::line%25two\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestUntrusted(t *testing.T) {
	var b bytes.Buffer
	text := "::error::injected\n::set-output name=x::y"
	if err := (Commands{W: &b}).Untrusted(text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 lines, got %q", lines)
	}
	tok, ok := strings.CutPrefix(lines[0], "::stop-commands::")
	if !ok || len(tok) != 32 {
		t.Fatalf("first line %q is not ::stop-commands::<token>", lines[0])
	}
	if lines[3] != "::"+tok+"::" {
		t.Errorf("last line %q does not resume with the token", lines[3])
	}
	if lines[1] != "::error::injected" {
		t.Errorf("text changed: %q", lines[1])
	}
}

func TestFormatKeyValueRoundTrip(t *testing.T) {
	values := map[string]string{
		"status":       "ok",
		"failed-steps": "a\nb\n",
		"tricky":       "x<<EOF\nEOF\nghadelimiter_\n=",
		"empty":        "",
	}
	var all strings.Builder
	for _, k := range []string{"status", "failed-steps", "tricky", "empty"} {
		s, err := FormatKeyValue(k, values[k])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s, k+"<<ghadelimiter_") {
			t.Errorf("%s: not a heredoc with a random delimiter: %q", k, s)
		}
		all.WriteString(s)
	}
	got, err := ParseKeyValues(all.String())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range values {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, err := FormatKeyValue("a\nb", "v"); err == nil {
		t.Error("a name with a newline must be refused")
	}
}

func TestDelimiterNeverInValue(t *testing.T) {
	for i := 0; i < 50; i++ {
		v := strings.Repeat("ghadelimiter_", 3)
		s, _ := FormatKeyValue("k", v)
		delim := strings.TrimPrefix(strings.SplitN(s, "\n", 2)[0], "k<<")
		if strings.Contains(v, delim) {
			t.Fatalf("delimiter %q occurs in the value", delim)
		}
	}
}
