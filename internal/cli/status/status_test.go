package status

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/test/cluster"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &testCluster)) }

const specYAML = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: demo
state:
  namespace: %s
steps:
  - name: first
    rollout:
      restart: deployment/a
      namespace: default
  - name: second
    needs: [first]
    rollout:
      restart: deployment/b
      namespace: default
`

func run(t *testing.T, file string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, out, errOut := iostreams.Test("")
	f := cmdutil.NewFactory(ios)
	opts := &Options{F: f, Client: testCluster.Client}
	opts.Spec.Files = []string{file}
	opts.Spec.VarPrefix, opts.Spec.SecretPrefix = cmdutil.DefaultVarPrefix, cmdutil.DefaultSecretPrefix
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "-o" {
			opts.Output = args[i+1]
		}
	}
	if opts.Output == "" {
		opts.Output = cmdutil.OutputText
	}
	err := Run(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(errOut, err)
	}
	return out.String(), errOut.String(), cmdutil.CodeOf(err)
}

func writeSpec(t *testing.T, ns string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "khook.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(specYAML, ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestStatusWithoutRecord(t *testing.T) {
	file := writeSpec(t, testCluster.Namespace(t))
	out, errOut, code := run(t, file, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if doc["found"] != false || doc["specChanged"] != false || fmt.Sprint(doc["resumableSteps"]) != "[]" {
		t.Errorf("status = %s, want found false, nothing resumable", out)
	}
	text, _, code := run(t, file)
	if code != 0 || !strings.Contains(text, "no record at secret") {
		t.Errorf("text status (exit %d):\n%s", code, text)
	}
}

func TestStatusPredictsResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := testCluster.Namespace(t)
	file := writeSpec(t, ns)
	ios, _, _ := iostreams.Test("")
	f := cmdutil.NewFactory(ios)
	s, err := f.LoadSpec(&cmdutil.SpecFlags{Files: []string{file}, VarPrefix: cmdutil.DefaultVarPrefix, SecretPrefix: cmdutil.DefaultSecretPrefix})
	if err != nil {
		t.Fatal(err)
	}
	// Last run: first succeeded, second failed.
	sess, err := state.Open(ctx, s, state.Options{Client: testCluster.Client, Version: "v-test"})
	if err != nil {
		t.Fatal(err)
	}
	sess.OnFinish(model.StepResult{Name: "first", Status: model.StatusOK, Attempts: 1})
	sess.OnFinish(model.StepResult{Name: "second", Status: model.StatusFailed, Attempts: 1, Error: "deployment b not found"})
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := run(t, file, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var doc struct {
		Found          bool          `json:"found"`
		SpecChanged    bool          `json:"specChanged"`
		ResumableSteps []string      `json:"resumableSteps"`
		Record         *state.Record `json:"record"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if !doc.Found || doc.SpecChanged || fmt.Sprint(doc.ResumableSteps) != "[first]" || doc.Record == nil ||
		doc.Record.RunStatus != state.RunFailed || doc.Record.Steps["second"].Error != "deployment b not found" {
		t.Errorf("status = %s", out)
	}

	text, _, _ := run(t, file)
	for _, want := range []string{"last run: failed", "khook v-test", "spec: unchanged since the last run",
		"first   ok       resumes: ", "second  failed   runs: it failed in the last run", "error: deployment b not found", "1 of 2 steps resume"} {
		if !strings.Contains(text, want) {
			t.Errorf("text status lacks %q:\n%s", want, text)
		}
	}
}
