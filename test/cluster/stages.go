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
)

// PodLogLines are the lines every simulated container "printed": kwok serves
// them for any pod's logs, so a failed job's log tail can be read.
var PodLogLines = []string{
	"khook test pod: starting",
	"khook test pod: doing the work",
	"khook test pod: simulated failure: exit code 1",
}

//go:embed stages/*.yaml
var stageFiles embed.FS

// writeKwokConfig writes kwok's --config file: the stages plus a ClusterLogs
// rule that serves logFile (CRI log format) for every container of every pod.
func writeKwokConfig(dir string) (string, error) {
	logFile := filepath.Join(dir, "pod.log")
	var logs bytes.Buffer
	ts := time.Now().UTC()
	for i, line := range PodLogLines {
		stream := "stdout"
		if i == len(PodLogLines)-1 {
			stream = "stderr"
		}
		fmt.Fprintf(&logs, "%s %s F %s\n", ts.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), stream, line)
	}
	if err := os.WriteFile(logFile, logs.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("khook test cluster: cannot write the pod log file: %w", err)
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
	docs = append(docs, fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: khook-all-pods
spec:
  logs:
  - logsFile: %q
    follow: false`, logFile))

	path := filepath.Join(dir, "kwok.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("khook test cluster: cannot write the kwok config: %w", err)
	}
	return path, nil
}
