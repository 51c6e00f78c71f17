package gitlab

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSections(t *testing.T) {
	var b bytes.Buffer
	at := time.Unix(1700000000, 0)
	_ = SectionStart(&b, at, "step cilium/x", "cilium: ok\nmore", true)
	_ = SectionEnd(&b, at.Add(2*time.Second), "step cilium/x")
	want := "\x1b[0Ksection_start:1700000000:step_cilium_x[collapsed=true]\r\x1b[0Kcilium: ok more\n" +
		"\x1b[0Ksection_end:1700000002:step_cilium_x\r\x1b[0K\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

func TestDotenv(t *testing.T) {
	out, err := Dotenv([]Entry{
		{DotenvKey("KHOOK_", "status"), "failed"},
		{DotenvKey("KHOOK_", "failed-steps"), "a\nb"},
		{DotenvKey("KHOOK_", "plan-path"), strings.Repeat("é", 4000)},
		{DotenvKey("KHOOK_", "comment-url"), ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) >= DotenvMaxBytes {
		t.Errorf("dotenv is %d bytes, GitLab wants under %d", len(out), DotenvMaxBytes)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || lines[0] != "KHOOK_STATUS=failed" || lines[1] != "KHOOK_FAILED_STEPS=a, b" || lines[3] != "KHOOK_COMMENT_URL=" {
		t.Errorf("unexpected dotenv:\n%s", out)
	}
	if !strings.HasSuffix(lines[2], "...") {
		t.Errorf("an oversized value must be cut with ...: %q", lines[2][len(lines[2])-10:])
	}
	if _, err := Dotenv([]Entry{{"bad-key", "v"}}); err == nil {
		t.Error("a key with '-' must be refused")
	}
}
