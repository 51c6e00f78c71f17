package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// diagnosedResults is a run whose helm install failed waiting: its
// Deployment's pod crash-loops after an OOM kill.
func diagnosedResults() *model.Results {
	return &model.Results{Name: "shop", Command: "apply", Status: model.RunFailed, FailureReason: model.ReasonStepFailed,
		StartedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), DurationMs: 31_000,
		Steps: []model.StepResult{{
			Name: "web", Type: "helm", Status: model.StatusFailed, Attempts: 1, DurationMs: 30_000,
			Error:   "release web in namespace shop (chart demo 0.1.0): install failed: context deadline exceeded",
			Changes: []model.Change{{Action: model.DidInstall, Kind: model.KindRelease, Namespace: "shop", Name: "web", Failed: true}},
			Pos:     spec.Pos{File: "khook.yaml", Line: 9, Col: 5},
			Diagnosis: &model.Diagnosis{
				Reason:  "pod web-7f9c-x2 CrashLoopBackOff: OOMKilled (exit 137), 5 restarts",
				Objects: []model.DiagnosedObject{{Kind: "Deployment", Namespace: "shop", Name: "web", Status: "InProgress", Message: "Available: 0/2"}},
				Pods: []model.DiagnosedPod{{Namespace: "shop", Name: "web-7f9c-x2", Phase: "Running",
					Condition: &model.PodCondition{Type: "ContainersReady", Status: "False", Reason: "ContainersNotReady", Message: "containers with unready status: [web]"},
					Containers: []model.DiagnosedContainer{{Name: "web", Image: "nginx:1.27", State: "waiting", Reason: "CrashLoopBackOff",
						Message: "back-off 2m40s restarting failed container=web pod=web-7f9c-x2", Restarts: 5,
						LastTermination: &model.Termination{Reason: "OOMKilled", ExitCode: 137},
						Logs:            []string{"connecting to postgres://app:***@db:5432/app", "fatal error: runtime: out of memory"}, LogsPrevious: true}}}},
				PodsNotReady: 2,
				Events:       []model.DiagnosedEvent{{Object: "Pod/web-7f9c-x2", Reason: "BackOff", Message: "Back-off restarting failed container web", Count: 12}},
				Unreadable:   []string{"the events in namespace shop: forbidden"},
			},
		}},
	}
}

func TestDiagnosisRenderers(t *testing.T) {
	r := diagnosedResults()
	var table bytes.Buffer
	if err := WriteResultsTable(&table, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "diagnosis-table.txt", table.Bytes())

	var md bytes.Buffer
	if err := WriteResultsMarkdown(&md, r, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "diagnosis-summary.md", md.Bytes())

	var comment bytes.Buffer
	if err := WriteResultsComment(&comment, r, CommentOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "diagnosis-comment.md", comment.Bytes())

	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "diagnosis.json", append(js, '\n'))

	x, err := xml.MarshalIndent(JUnitOfResults(r, ""), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "diagnosis-junit.xml", append(x, '\n'))

	as := ResultsAnnotations(r)
	if len(as) != 1 || !strings.HasSuffix(as[0].Title, ": pod web-7f9c-x2 CrashLoopBackOff: OOMKilled (exit 137), 5 restarts") ||
		!strings.Contains(as[0].Message, "fatal error: runtime: out of memory") {
		t.Errorf("annotation = %+v, want the reason in its title and the diagnosis in its message", as)
	}
	if got := model.ChangesSentence(r); got != "Changes: Helm: 1 installed (failed: shop/web)." {
		t.Errorf("changes sentence = %q", got)
	}
	if !r.Changed() {
		t.Error("a failed install that wrote is not counted as a change")
	}
}

func TestPodSummary(t *testing.T) {
	exit1 := int32(1)
	for _, tc := range []struct {
		pod  model.DiagnosedPod
		want string
	}{
		{model.DiagnosedPod{Phase: "Pending", Condition: &model.PodCondition{Type: "PodScheduled", Status: "False", Reason: "Unschedulable", Message: "0/1 nodes are available"}},
			"Pending: PodScheduled=False Unschedulable: 0/1 nodes are available"},
		{model.DiagnosedPod{Phase: "Pending", Containers: []model.DiagnosedContainer{{Name: "a", State: "waiting", Reason: "ImagePullBackOff", Message: `Back-off pulling image "x"`}}},
			`ImagePullBackOff: Back-off pulling image "x"`},
		{model.DiagnosedPod{Phase: "Failed", Containers: []model.DiagnosedContainer{{Name: "job", State: "terminated", Reason: "Error", ExitCode: &exit1}}},
			"Error: exit 1"},
		{model.DiagnosedPod{Phase: "Running", Containers: []model.DiagnosedContainer{{Name: "a", State: "waiting", Reason: "CrashLoopBackOff", Restarts: 1,
			LastTermination: &model.Termination{Reason: "OOMKilled", ExitCode: 137}}}},
			"CrashLoopBackOff: OOMKilled (exit 137), 1 restart"},
	} {
		if got := tc.pod.Summary(); got != tc.want {
			t.Errorf("Summary() = %q, want %q", got, tc.want)
		}
	}
}
