package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
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

// FuzzRedact is the property the redactor promises: for any registered
// value, no printed form of it (raw, escaped, base64, a line of it)
// survives, whatever text surrounds it.
func FuzzRedact(f *testing.F) {
	for _, s := range hostile {
		f.Add(s, "text with "+s+" inside")
	}
	f.Fuzz(func(t *testing.T, secret, text string) {
		r := New()
		r.Add(secret)
		for _, form := range append(allForms(secret), secret) {
			if form == "" || strings.Contains(Mask, form) {
				continue
			}
			out := r.String(text + form + text)
			// The mask's own stars next to the text can spell a form that
			// has stars in it ("!" + "***" holds "!*"): that is not the
			// form surviving, so look for it with each mask replaced by a
			// byte the form lacks.
			sentinel := "\x00"
			for _, c := range []string{"\x00", "\x01", "\uFFFD"} {
				if !strings.Contains(form, c) {
					sentinel = c
					break
				}
			}
			if strings.Contains(strings.ReplaceAll(out, Mask, sentinel), form) {
				t.Fatalf("form %q of secret %q survives in %q", form, secret, out)
			}
		}
	})
}

func TestOverlappingSecretsLeaveNothingVisible(t *testing.T) {
	r := New()
	r.Add("abcd-secret")
	r.Add("secret-tail-xyz")
	if got := r.String("x abcd-secret-tail-xyz y"); got != "x *** y" {
		t.Fatalf("got %q: overlapping secrets must be masked as one stretch", got)
	}
}

func TestYAMLForms(t *testing.T) {
	r := New()
	r.Add("it's\x01a\"pass")
	for _, printed := range []string{`'it''s` + "\x01" + `a"pass'`, `"it's\x01a\"pass"`} {
		if got := r.String("p: " + printed); strings.Contains(got, "pass") {
			t.Errorf("YAML form %s leaked: %q", printed, got)
		}
	}
}

func TestFoundSkipsFlags(t *testing.T) {
	r := New()
	for _, v := range []string{"true", "80", "", "No"} {
		r.Found(v)
	}
	r.Found("s3cr3t-db-pass")
	if got := r.String("enabled: true port: 80 pass: s3cr3t-db-pass"); got != "enabled: true port: 80 pass: ***" {
		t.Fatalf("got %q", got)
	}
}

// TestSubscribeSeesEachNewFormBeforeAddReturns: a subscriber (khook ci's
// ::add-mask:: writer) learns what was registered before the value can be
// printed, and each form once.
func TestSubscribeSeesEachNewFormBeforeAddReturns(t *testing.T) {
	r := New()
	r.Add("early-secret")
	var got []string
	r.Subscribe(func(forms []string) { got = append(got, forms...) })
	if !slices.Contains(got, "early-secret") {
		t.Fatalf("the forms registered before Subscribe are replayed: %q", got)
	}
	n := len(got)
	r.Add("late-secret")
	if !slices.Contains(got[n:], "late-secret") || !slices.Contains(got[n:], base64.StdEncoding.EncodeToString([]byte("late-secret"))) {
		t.Fatalf("the new forms reach the subscriber before Add returns: %q", got[n:])
	}
	n = len(got)
	r.Add("late-secret")
	if len(got) != n {
		t.Fatalf("a value registered twice is announced once: %q", got[n:])
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, known := range []int{0, 1000} {
		b.Run(fmt.Sprintf("known=%d", known), func(b *testing.B) {
			r := New()
			for i := range known {
				r.Add(fmt.Sprintf("registered-secret-%06d", i))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Add(fmt.Sprintf("new-secret-value-%09d", i))
			}
		})
	}
}

func BenchmarkString(b *testing.B) {
	r := New()
	for i := range 1000 {
		r.Add(fmt.Sprintf("registered-secret-%06d", i))
	}
	r.Add("-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END KEY-----")
	line := "12:00:01 web: deployment/web configured, replicas 3, image registry.example/web:1.2.3 registered-secret-000500\n"
	text := strings.Repeat(line, 100)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.String(text)
	}
}
