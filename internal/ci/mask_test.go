package ci

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
)

// midRunBackend registers a secret between two progress lines, as a run
// does when it reads a Secret from the cluster halfway through.
type midRunBackend struct {
	fakeBackend
	red    *redact.Redactor
	secret string
}

func (b *midRunBackend) Apply(ctx context.Context, req Request) (*model.Results, error) {
	req.Emit(model.Event{Kind: model.EventMessage, Step: "web", Message: "before the read"})
	b.red.Add(b.secret)
	req.Emit(model.Event{Kind: model.EventMessage, Step: "web", Message: "read " + b.secret})
	return b.fakeBackend.Apply(ctx, req)
}

// TestASecretRegisteredMidRunIsAnnouncedBeforeItIsPrinted: the value read
// between two writes is announced with ::add-mask:: after the first and
// before the second, outside the progress log's ::stop-commands:: block
// (where the runner would not obey it), and the second line shows ***.
func TestASecretRegisteredMidRunIsAnnouncedBeforeItIsPrinted(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "apply"})
	red := redact.New()
	b := &midRunBackend{red: red, secret: "m1d-run-pa55word"}
	var out, errOut bytes.Buffer
	Run(context.Background(), Options{Stdout: &out, Stderr: &errOut, Environ: e.environ, Backend: b, Redactor: red, Now: func() time.Time { return t0 }})
	log := out.String()

	before := strings.Index(log, "web: before the read")
	mask := strings.Index(log, "::add-mask::m1d-run-pa55word\n")
	after := strings.Index(log, "web: read ***\n")
	if before < 0 || mask < 0 || after < 0 || !(before < mask && mask < after) {
		t.Fatalf("want the first line, then ::add-mask::, then the masked line (at %d, %d, %d):\n%s", before, mask, after, log)
	}
	// The runner obeys ::add-mask:: only outside ::stop-commands::.
	fence := ""
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.HasPrefix(line, "::stop-commands::"):
			fence = strings.TrimPrefix(line, "::stop-commands::")
		case fence != "" && line == "::"+fence+"::":
			fence = ""
		case strings.HasPrefix(line, "::add-mask::") && fence != "":
			t.Errorf("%q is inside a ::stop-commands:: block", line)
		}
	}
	rest := strings.ReplaceAll(log, "::add-mask::m1d-run-pa55word\n", "")
	if strings.Contains(rest, "m1d-run-pa55word") || strings.Contains(errOut.String(), "m1d-run-pa55word") {
		t.Fatalf("the secret is printed outside its ::add-mask:: line:\n%s", log)
	}
}
