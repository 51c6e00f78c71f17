package cluster

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Pod behaviour switches understood by the cluster's kwok stages (see
// stages/*.yaml). Put them on a pod template's metadata.
const (
	// FailAnnotation (label or annotation) "true": the pod runs, then fails
	// with exit code 1 (phase Failed).
	FailAnnotation = "khook.test/fail"
	// ReadyAfterAnnotation = a Go duration such as "2s": the pod runs unready
	// and becomes ready after that delay.
	ReadyAfterAnnotation = "khook.test/ready-after"
	// NeverReadyAnnotation "true": the pod runs but never becomes ready (a
	// job pod never completes).
	NeverReadyAnnotation = "khook.test/never-ready"
	// CrashLoopAnnotation "true": the pod runs but its containers wait in
	// CrashLoopBackOff after 5 restarts, the last terminated OOMKilled with
	// exit code 137.
	CrashLoopAnnotation = "khook.test/crash-loop"
	// ImagePullErrorAnnotation "true": the pod stays Pending, its containers
	// waiting in ImagePullBackOff with the registry's "not found".
	ImagePullErrorAnnotation = "khook.test/image-pull-error"
)

// A pod whose nodeSelector no node has stays Pending: the real
// kube-scheduler reports it Unschedulable (PodScheduled=False) with a
// FailedScheduling event. UnschedulableNodeSelector is such a selector.
var UnschedulableNodeSelector = map[string]string{"khook.test/no-such-node": "true"}

// PodLogLines are the lines every simulated container "printed": kwok serves
// them for any pod's logs, so a failed job's log tail can be read.
var PodLogLines = []string{
	"khook test pod: starting",
	"khook test pod: doing the work",
	"khook test pod: simulated failure: exit code 1",
}

// LeakyContainer is a container name whose logs differ: its current
// instance printed LeakyLogLines[:1], its previous instance (the one that
// crashed) all of LeakyLogLines, the second line with LeakedSecret in it.
// Tests use it for a crash-looping container whose log tail must pass
// khook's redactor.
const (
	LeakyContainer = "leaky"
	LeakedSecret   = "s3cr3t-khook-leaked-value"
)

// LeakyLogLines: see LeakyContainer.
var LeakyLogLines = []string{
	"starting web server on :8080",
	"connecting to postgres://app:" + LeakedSecret + "@db:5432/app",
	"fatal error: runtime: out of memory",
}

//go:embed stages/*.yaml
var stageFiles embed.FS

// writeKwokConfig writes kwok's --config file: the stages plus ClusterLogs
// rules that serve the printed log (PrintLog) for PrintedLogNamespace's pods
// and logFile (CRI log format) for every container of every other pod.
func writeKwokConfig(dir string) (string, error) {
	logFile := filepath.Join(dir, "pod.log")
	leakyFile := filepath.Join(dir, "leaky.log")
	leakyPrevious := filepath.Join(dir, "leaky-previous.log")
	printed := printedLog(dir)
	for path, lines := range map[string][]string{logFile: PodLogLines, leakyFile: LeakyLogLines[:1], leakyPrevious: LeakyLogLines,
		printed: {"khook test pod: no test chose this log (cluster.PrintLog)"}} {
		if err := writeCRILog(path, lines); err != nil {
			return "", err
		}
	}

	names, err := fs.Glob(stageFiles, "stages/*.yaml")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	var docs []string
	for _, n := range names {
		b, err := stageFiles.ReadFile(n)
		if err != nil {
			return "", err
		}
		docs = append(docs, strings.TrimSpace(string(b)))
	}
	// Rules are tried in order: the chosen log's namespace first.
	docs = append(docs, fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: khook-printed-log
spec:
  selector:
    matchNamespaces: [%q]
  logs:
  - logsFile: %q
    previousLogsFile: %q
    follow: false`, PrintedLogNamespace, printed, printed), fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: khook-all-pods
spec:
  logs:
  - containers: [%q]
    logsFile: %q
    previousLogsFile: %q
    follow: false
  - logsFile: %q
    previousLogsFile: %q
    follow: false`, LeakyContainer, leakyFile, leakyPrevious, logFile, logFile))

	path := filepath.Join(dir, "kwok.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("khook test cluster: cannot write the kwok config: %w", err)
	}
	return path, nil
}

// writeCRILog writes lines in the CRI log format kwok serves, the last one
// on stderr.
func writeCRILog(path string, lines []string) error {
	var logs bytes.Buffer
	ts := time.Now().UTC()
	for i, line := range lines {
		stream := "stdout"
		if i == len(lines)-1 {
			stream = "stderr"
		}
		fmt.Fprintf(&logs, "%s %s F %s\n", ts.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), stream, line)
	}
	if err := os.WriteFile(path, logs.Bytes(), 0o644); err != nil {
		return fmt.Errorf("khook test cluster: cannot write the pod log file %s: %w", path, err)
	}
	return nil
}
