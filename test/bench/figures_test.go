package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/test/e2e/apiproxy"
)

func TestSummarizeRuns(t *testing.T) {
	runs := []run{
		{wall: 3 * time.Second, writes: []string{"a", "b"}, dryRuns: 3, revisions: 1},
		{wall: 1 * time.Second, writes: []string{"a"}, dryRuns: 3},
		{wall: 2 * time.Second, writes: []string{"a", "b", "c"}, dryRuns: 3, revisions: 2},
	}
	got := summarizeRuns(runs)
	want := figures{median: 2 * time.Second, min: time.Second, writes: 2, dryRuns: 3, revisions: 1}
	if got != want {
		t.Errorf("summarizeRuns = %+v, want %+v", got, want)
	}
	if s := summarize([]string{"POST /x", "DELETE /y", "POST /x"}); s != "    1 × DELETE /y\n    2 × POST /x\n" {
		t.Errorf("summarize = %q", s)
	}
}

func TestThreeWayTable(t *testing.T) {
	run := func(wall time.Duration, writes, jobWrites int) []measured {
		return []measured{{wall: wall, counts: apiproxy.Counts{Verbs: map[string]int{"GET": 10, "POST": writes}}, jobWrites: jobWrites}}
	}
	got := threeWayTable([]tableRow{
		{"converged", "khook", run(time.Second, 2, 2)},
		{"converged", "helmfile", run(20*time.Second, 0, 0)},
		{"plan --diff", "khook", run(time.Second, 0, 0)},
	})
	for _, want := range []string{
		"| converged | khook | 1.0 s | 0.050 × | 12 | 2 | 2 | 0 | 0 | 0 MiB |",
		"| converged | helmfile | 20.0 s | 1.000 × | 10 | 0 | 0 |",
		"| plan --diff | khook | 1.0 s | — | 10 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table has no line starting %q:\n%s", want, got)
		}
	}
}
