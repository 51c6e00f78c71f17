package bench

import (
	"testing"
	"time"
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
