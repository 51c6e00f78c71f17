package helmstep

import (
	"testing"
	"time"

	"github.com/khook/khook/spec"
)

// BenchmarkConvergedRerun is one helm step on a release that has converged:
// history read, chart fetched from an HTTP repository, values merged, Drift
// over the release's objects (a GET and an apply dry run each); no write.
func BenchmarkConvergedRerun(b *testing.B) {
	f := newFixture(b)
	repo := serveChartRepo(b, "u", "p", demoChart(b, "0.1.0"))
	st := f.step("bench", spec.Helm{Chart: "demo", Repo: repo.URL, Version: "0.1.0", Auth: &spec.Auth{Username: "u", Password: "p"}})
	if _, err := f.try(st, time.Minute); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		out, err := f.try(st, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if out.Writes != 0 {
			b.Fatalf("converged re-run sent %d writes: %s", out.Writes, out.Detail)
		}
	}
}
