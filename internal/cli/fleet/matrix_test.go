package fleet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/runner/command"
)

// writeFleet writes a spec and a fleet of n clusters (waves of 3: the
// first wave 1, the rest wave 2) into a temp dir and returns the fleet path.
func writeFleet(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	spec := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: demo}\nsteps:\n  - name: ns\n    apply: {manifest: \"apiVersion: v1\\nkind: Namespace\\nmetadata: {name: demo}\\n\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "khook.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("apiVersion: khook.io/v1\nkind: Fleet\nmetadata: {name: platform}\nfiles: [khook.yaml]\nrollout: {maxFailures: 0}\nclusters:\n")
	for i := 0; i < n; i++ {
		wave, env := 2, "prod"
		if i < 3 {
			wave, env = 1, "staging"
		}
		fmt.Fprintf(&b, "  - {name: c%03d, wave: %d, labels: {env: %s}, kubeconfigSecret: KUBECONFIG_C%03d}\n", i, wave, env, i)
	}
	path := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runMatrix(t testing.TB, opts MatrixOptions) (string, string, error) {
	ios, out, errOut := iostreams.Test("")
	opts.F = cmdutil.NewFactory(ios)
	if opts.Output == "" {
		opts.Output = MatrixGitHub
	}
	if opts.Command == "" {
		opts.Command = "plan"
	}
	err := RunMatrix(&opts)
	return out.String(), errOut.String(), err
}

type ghMatrix struct {
	Include []struct {
		Cluster          string `json:"cluster"`
		Wave             int    `json:"wave"`
		KubeconfigSecret string `json:"kubeconfigSecret"`
	} `json:"include"`
}

func TestMatrixGitHub(t *testing.T) {
	path := writeFleet(t, 5)
	out, _, err := runMatrix(t, MatrixOptions{Fleet: path, Selector: "env=prod"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("matrix is not one line:\n%s", out)
	}
	var m ghMatrix
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Include) != 2 || m.Include[0].Cluster != "c003" || m.Include[0].Wave != 2 || m.Include[0].KubeconfigSecret != "KUBECONFIG_C003" {
		t.Errorf("matrix = %+v", m)
	}
	out, _, err = runMatrix(t, MatrixOptions{Fleet: path, Wave: 1})
	if err != nil || json.Unmarshal([]byte(out), &m) != nil || len(m.Include) != 3 {
		t.Errorf("--wave 1: %v %s", err, out)
	}
	if _, _, err := runMatrix(t, MatrixOptions{Fleet: path, Wave: 3}); cmdutil.CodeOf(err) != command.ExitValidation {
		t.Errorf("--wave 3 (no such wave): %v, want exit 2", err)
	}
}

// Past 256 clusters GitHub's matrix splits into chunks, and khook says so.
func TestMatrixGitHubChunks(t *testing.T) {
	path := writeFleet(t, 300)
	out, errOut, err := runMatrix(t, MatrixOptions{Fleet: path})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "300 clusters exceed GitHub's 256 jobs per matrix") {
		t.Errorf("stderr = %q", errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d chunks, want 2", len(lines))
	}
	total := 0
	for _, l := range lines {
		var m ghMatrix
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Include) > 256 {
			t.Errorf("a chunk of %d", len(m.Include))
		}
		total += len(m.Include)
	}
	if total != 300 {
		t.Errorf("chunks hold %d clusters, want 300", total)
	}
	out, _, err = runMatrix(t, MatrixOptions{Fleet: path, Chunk: 2})
	var m ghMatrix
	if err != nil || json.Unmarshal([]byte(out), &m) != nil || len(m.Include) != 44 || m.Include[0].Cluster != "c256" {
		t.Errorf("--chunk 2: %v, %d legs", err, len(m.Include))
	}
}

// The GitLab child pipeline: a stage per wave and its gate, jobs of at
// most 200 legs, a resource group per cluster, and never a needs: list.
func TestMatrixGitLab(t *testing.T) {
	path := writeFleet(t, 450)
	out, errOut, err := runMatrix(t, MatrixOptions{Fleet: path, Output: MatrixGitLab, Image: "khook:test"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "exceed GitLab's 200") {
		t.Errorf("stderr = %q", errOut)
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, out)
	}
	if strings.Contains(out, "needs:") {
		t.Error("the child pipeline uses needs:")
	}
	stages := fmt.Sprint(doc["stages"])
	if stages != "[wave-1 wave-1-gate wave-2 wave-2-gate report]" {
		t.Errorf("stages = %s", stages)
	}
	legs := 0
	for name, v := range doc {
		job, ok := v.(map[string]any)
		if !ok || job["parallel"] == nil {
			continue
		}
		if job["resource_group"] != "khook-$KHOOK_CLUSTER" {
			t.Errorf("%s: resource_group = %v", name, job["resource_group"])
		}
		m := job["parallel"].(map[string]any)["matrix"].([]any)[0].(map[string]any)["KHOOK_CLUSTER"].([]any)
		if len(m) > 200 {
			t.Errorf("%s has %d legs", name, len(m))
		}
		legs += len(m)
	}
	if legs != 450 {
		t.Errorf("%d legs, want 450", legs)
	}
	gate := doc["wave-1-gate"].(map[string]any)["variables"].(map[string]any)
	if gate["KHOOK_COMMAND"] != "fleet-report" || gate["KHOOK_WAVE"] != "1" {
		t.Errorf("wave-1-gate variables = %v", gate)
	}
}

func BenchmarkMatrix500(b *testing.B) {
	path := writeFleet(b, 500)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := runMatrix(b, MatrixOptions{Fleet: path}); err != nil {
			b.Fatal(err)
		}
	}
}
