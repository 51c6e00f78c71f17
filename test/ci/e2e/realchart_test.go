package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/ci/citest"
)

// A real chart's release that times out names its Pending pod and the
// scheduler's reason in every output: the terminal (live, and the
// diagnosis), results.json, the job summary, the annotation, the comment.
func TestRealChartTimeoutSaysWhyEverywhere(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "realchart-timeout.yaml", map[string]string{"command": "apply", "comment": "always", "vars": "NS=" + ns})
	tgz, err := os.ReadFile(chartsrc.RealChart(t, chartsrc.RealChartsDir(t), "metrics-server", "3.13.1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.Workspace, "metrics-server-3.13.1.tgz"), tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 1 {
		t.Fatalf("apply exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	const reason = "Unschedulable: 0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules"
	pod := "pod metrics-metrics-server-"
	cs := srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("%d comments, want 1", len(cs))
	}
	results := readDir(t, filepath.Join(g.Workspace, ".khook"))["results.json"]
	unescape := strings.NewReplacer("%3A", ":", "%2C", ",", "%0D", "\r", "%0A", "\n", "%25", "%")
	annotations := unescape.Replace(strings.Join(annotationLine.FindAllString(res.Stdout, -1), "\n"))
	for name, body := range map[string]string{"terminal": withoutMasks(res.Stdout), "summary": g.Read(t, "summary"),
		"comment": cs[0].Body, "results.json": results, "annotations": annotations} {
		if !strings.Contains(body, pod) || !strings.Contains(body, reason) {
			t.Errorf("the %s does not name the Pending pod and %q:\n%s", name, reason, body)
		}
	}
	// While Helm waited, the live progress said it.
	if !strings.Contains(res.Stdout, "metrics: waiting: Deployment "+ns+"/metrics-metrics-server: "+pod) {
		t.Errorf("no live blocker in the terminal:\n%s", res.Stdout)
	}
}
