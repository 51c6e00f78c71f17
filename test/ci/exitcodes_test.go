package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/test/ci/citest"
)

// The exit-code table (runner/command.ExitTable) row by row through every
// front end: khook with text and -o json output, khook ci on GitHub and on
// GitLab. Each front end must give the row's code. These are the rows that
// need no cluster (validation, usage, cluster-unreachable); every other
// row (success, a step that fails or would fail, drift, the lock,
// cancelled, plan-changed, plan-not-found, changes pending and failures
// under plan --detailed-exitcode) runs through the same four front ends on
// the harness in TestExitCodeTableOnTheCluster (test/ci/e2e/exittable_test.go),
// which fails on a row of the table it has no case for.
func TestExitCodeTableEveryFrontEnd(t *testing.T) {
	dir := t.TempDir()
	copyTestdata(t, dir)
	// A cluster nobody listens at: a run that gets past validation fails
	// there, cluster-unreachable.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: kc-token-unused}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o644)
	kcData, _ := os.ReadFile(kubeconfig)

	rows := []struct {
		name   string
		reason string
		// cli are khook's arguments (text; -o json is added for the
		// second run); inputs are khook ci's, by input name.
		cli    []string
		inputs map[string]string
	}{
		{name: "invalid spec", reason: model.ReasonValidation,
			cli:    []string{"apply", "-f", "invalid.yaml"},
			inputs: map[string]string{"command": "apply", "file": "invalid.yaml"}},
		{name: "invalid spec, plan", reason: model.ReasonValidation,
			cli:    []string{"plan", "-f", "invalid.yaml"},
			inputs: map[string]string{"command": "plan", "file": "invalid.yaml"}},
		{name: "a selection naming no step", reason: model.ReasonValidation,
			cli:    []string{"apply", "-f", "khook.yaml", "--var-file", "vars.yaml", "--target", "nosuch"},
			inputs: map[string]string{"command": "apply", "file": "khook.yaml", "var-file": "vars.yaml", "target": "nosuch"}},
		{name: "a selection naming no step, plan", reason: model.ReasonValidation,
			cli:    []string{"plan", "-f", "khook.yaml", "--var-file", "vars.yaml", "--target", "nosuch"},
			inputs: map[string]string{"command": "plan", "file": "khook.yaml", "var-file": "vars.yaml", "target": "nosuch"}},
		{name: "bad usage", reason: command.ReasonUsage,
			cli:    []string{"apply", "--no-such-flag"},
			inputs: map[string]string{"command": "no-such-command"}}, // khook ci's bad input: validation, 2 as well
		{name: "unreachable cluster", reason: model.ReasonClusterUnreachable,
			cli:    []string{"apply", "-f", "khook.yaml", "--var-file", "vars.yaml", "--set", "DB_TOKEN=x"},
			inputs: map[string]string{"command": "apply", "file": "khook.yaml", "var-file": "vars.yaml", "vars": "DB_TOKEN=x"}},
		{name: "unreachable cluster, plan", reason: model.ReasonClusterUnreachable,
			cli:    []string{"plan", "-f", "khook.yaml", "--var-file", "vars.yaml", "--set", "DB_TOKEN=x"},
			inputs: map[string]string{"command": "plan", "file": "khook.yaml", "var-file": "vars.yaml", "vars": "DB_TOKEN=x"}},
	}
	for _, row := range rows {
		t.Run(strings.ReplaceAll(row.name, " ", "_"), func(t *testing.T) {
			want := command.ExitCodeOf(true, row.reason)
			env := []string{"HOME=" + dir, "KUBECONFIG=" + kubeconfig, "TMPDIR=" + t.TempDir()}
			for _, output := range []string{"text", "json"} {
				args := append([]string(nil), row.cli...)
				if output == "json" {
					args = append(args, "-o", "json")
				}
				if res := citest.Run(t, dir, env, args...); res.Code != want {
					t.Errorf("khook %s: exit %d, want %d\n%s%s", strings.Join(args, " "), res.Code, want, res.Stdout, res.Stderr)
				}
			}

			g := citest.NewGitHub(t, "http://127.0.0.1:1", 3, map[string]string{"comment": "never", "kubeconfig": string(kcData)})
			copyTestdata(t, g.Workspace)
			for k, v := range row.inputs {
				g.Set("INPUT_" + strings.ToUpper(k) + "=" + v)
			}
			if res := citest.Run(t, g.Workspace, g.Environ); res.Code != want {
				t.Errorf("khook ci on GitHub %v: exit %d, want %d\n%s", row.inputs, res.Code, want, res.Stdout)
			}

			gl := t.TempDir()
			copyTestdata(t, gl)
			var kv []string
			for k, v := range row.inputs {
				kv = append(kv, "KHOOK_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))+"="+v)
			}
			kv = append(kv, "KHOOK_KUBECONFIG="+string(kcData), "HOME="+gl, "TMPDIR="+t.TempDir())
			if res := citest.Run(t, gl, gitlabEnv(gl, kv...)); res.Code != want {
				t.Errorf("khook ci on GitLab %v: exit %d, want %d\n%s", row.inputs, res.Code, want, res.Stdout)
			}
		})
	}
}

// Every row of the table is what command.ExitCode gives its result, and a
// reason the table does not name is a failure (1).
func TestExitCodeOfEveryRow(t *testing.T) {
	for _, row := range command.ExitTable {
		var got int
		switch {
		case row.Reason != "":
			got = command.ExitCodeOf(true, row.Reason)
		case row.Code == command.ExitOK:
			got = command.ExitCode(command.Result{})
		default: // changes pending
			got = command.ExitCode(command.Result{Changes: true, DetailedExitCode: true})
		}
		if got != row.Code {
			t.Errorf("row %q (%s): ExitCode gives %d, the table says %d", row.Reason, row.When, got, row.Code)
		}
	}
	if got := command.ExitCode(command.Result{Failed: true, Reason: model.ReasonValidation, DetailedExitCode: true}); got != command.ExitFailure {
		t.Errorf("plan --detailed-exitcode: a validation failure exits %d, want 1 (2 is changes pending there)", got)
	}
	if got := command.ExitCode(command.Result{Changes: true}); got != command.ExitOK {
		t.Errorf("changes without --detailed-exitcode exit %d, want 0", got)
	}
	if got := command.ExitCodeOf(true, ""); got != command.ExitFailure {
		t.Errorf("a failure without a reason exits %d, want 1", got)
	}
}

// khook --help, docs/cli.md, docs/ci.md and action.yml state the one table.
func TestExitTableDocumented(t *testing.T) {
	root := citest.RepoRoot()
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, doc := range []string{"docs/cli.md", "docs/ci.md"} {
		if !strings.Contains(read(doc), command.ExitTableMarkdown()) {
			t.Errorf("%s does not hold the exit-code table as runner/command.ExitTableMarkdown writes it:\n%s", doc, command.ExitTableMarkdown())
		}
	}
	if !strings.Contains(read("action.yml"), command.ExitByReason()) {
		t.Errorf("action.yml's failure-reason output does not state %q", command.ExitByReason())
	}
	res := citest.Run(t, t.TempDir(), []string{"HOME=" + t.TempDir()}, "--help")
	if !strings.Contains(res.Stdout, command.ExitTableText()) {
		t.Errorf("khook --help does not print the exit-code table:\n%s", res.Stdout)
	}
}
