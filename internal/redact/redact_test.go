package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// hostile are secret shapes that break naive redactors.
var hostile = []string{
	"s3cr3t",
	"line-one-of-key\nline-two-of-key\n-----END-----",
	`a.b*c+d?(e)[f]{g}|h^i$j\k`,
	"p@ss:w/rd?&=#%",
	"web", // a substring of ordinary words and step names
	`quote"and\backslash`,
}

func TestStringMasksEveryForm(t *testing.T) {
	r := New()
	for _, s := range hostile {
		r.Add(s)
	}
	for _, s := range hostile {
		js, _ := json.Marshal(s)
		for _, form := range []string{
			s,
			string(js),
			url.QueryEscape(s),
			base64.StdEncoding.EncodeToString([]byte(s)),
		} {
			in := "before " + form + " after"
			out := r.String(in)
			if strings.Contains(out, s) || strings.Contains(out, form) {
				t.Errorf("secret %q leaked as %q in %q", s, form, out)
			}
		}
	}
}

func TestEachLineOfAMultiLineSecret(t *testing.T) {
	r := New()
	r.Add("first-line-secret\nsecond-line-secret\nab")
	out := r.String("log: second-line-secret\nab stays: short lines are not masked alone")
	if strings.Contains(out, "second-line-secret") {
		t.Fatalf("a line of a multi-line secret leaked: %q", out)
	}
	if !strings.Contains(out, "ab stays") {
		t.Fatalf("a line under %d characters was masked everywhere: %q", minLineLen, out)
	}
}

func TestLongestSecretWins(t *testing.T) {
	r := New()
	r.Add("token")
	r.Add("token-and-more")
	if got := r.String("x token-and-more y"); got != "x *** y" {
		t.Fatalf("got %q: the longer secret must be masked whole", got)
	}
}

func TestURLCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"pull https://user:p%40ss@charts.example/x":   "pull https://***@charts.example/x",
		"oci://AWS:tok@123.dkr.ecr/charts/app:1.2.3":  "oci://***@123.dkr.ecr/charts/app:1.2.3",
		"chart: oci://ref[:tag|@digest] or ./path":    "chart: oci://ref[:tag|@digest] or ./path",
		"mail admin@example.com about https://x.io/a": "mail admin@example.com about https://x.io/a",
	} {
		if got := StripURLCredentials(in); got != want {
			t.Errorf("StripURLCredentials(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriterAndError(t *testing.T) {
	r := New()
	r.Add("hunter2")
	var buf bytes.Buffer
	fmt.Fprintln(r.Writer(&buf), "password is hunter2")
	if buf.String() != "password is ***\n" {
		t.Fatalf("writer: %q", buf.String())
	}
	base := fmt.Errorf("login with hunter2 failed")
	err := r.Error(base)
	if err.Error() != "login with *** failed" {
		t.Fatalf("error: %q", err)
	}
	if r.Error(nil) != nil {
		t.Fatal("nil error must stay nil")
	}
}

func TestNilAndEmpty(t *testing.T) {
	var r *Redactor
	r.Add("x")
	if got := r.String("https://u:p@h/"); got != "https://***@h/" {
		t.Fatalf("a nil redactor still strips URL credentials: %q", got)
	}
	New().Add("") // an empty secret would mask nothing useful and everything harmful
}

func FuzzRedact(f *testing.F) {
	for _, s := range hostile {
		f.Add(s, "text with "+s+" inside")
	}
	f.Fuzz(func(t *testing.T, secret, text string) {
		r := New()
		r.Add(secret)
		out := r.String(text + secret + text)
		// The mask's own stars next to the text can spell a secret that has
		// stars in it ("!" + "***" holds "!*"): that is not the secret
		// surviving, so look for it with each mask replaced by a byte the
		// secret lacks.
		sentinel := "\x00"
		for _, c := range []string{"\x00", "\x01", "\uFFFD"} {
			if !strings.Contains(secret, c) {
				sentinel = c
				break
			}
		}
		if secret != "" && strings.Contains(strings.ReplaceAll(out, Mask, sentinel), secret) && !strings.Contains(Mask, secret) {
			t.Fatalf("secret %q survives in %q", secret, out)
		}
	})
}
