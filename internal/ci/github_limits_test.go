package ci

import (
	"fmt"
	"strings"
	"testing"

	"github.com/khook/khook/report"
	"github.com/khook/khook/spec"
)

func TestCILimitAnnotations(t *testing.T) {
	var as []report.Annotation
	for i := 1; i <= 25; i++ {
		as = append(as, report.Annotation{Level: report.AnnotationError, Pos: spec.Pos{File: "k.yaml", Line: i, Col: 1}, Title: "t", Message: fmt.Sprintf("problem %d", i)})
	}
	as = append(as, report.Annotation{Level: report.AnnotationWarning, Message: "w"})
	got := LimitAnnotations(as, MaxAnnotationsPerLevel)
	if len(got) != 11 {
		t.Fatalf("got %d annotations, want 10 errors + 1 warning", len(got))
	}
	last := got[9]
	if last.Title != "khook: 16 more errors" || !strings.Contains(last.Message, "k.yaml:25:1: t: problem 25") || last.Pos.Line != 10 {
		t.Errorf("folded annotation: %+v", last)
	}
}
