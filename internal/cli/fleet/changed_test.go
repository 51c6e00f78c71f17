package fleet

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/khook/khook/test/needtool"
)

// --changed-since keeps the clusters a change touches: a cluster's own
// overlay or policy file touches it alone, the shared spec and a manifest
// it reads touch every cluster, a file no spec reads none.
func TestMatrixChangedSince(t *testing.T) {
	needtool.Path(t, "git", "the changed-files selection reads the diff with it")
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write("khook.yaml", "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: d}\nsteps: [{name: w, timeout: 1s, wait: {for: delete, on: pods/x}}, {name: m, apply: {manifests: [{file: manifests/cm.yaml}]}}]\n")
	write("manifests/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	write("README.md", "# the fleet\n")
	write("clusters/eu.yaml", "# eu\n")
	write("clusters/us.yaml", "# us\n")
	write("policies/eu.yaml", "policies:\n  - name: no-delete\n    deny: action == \"delete\"\n    message: '\"no delete in eu\"'\n")
	write("fleet.yaml", "apiVersion: khook.io/v1\nkind: Fleet\nmetadata: {name: f}\nfiles: [khook.yaml]\nclusters:\n  - {name: eu, context: eu, files: [clusters/eu.yaml], policies: [policies/eu.yaml]}\n  - {name: us, context: us, files: [clusters/us.yaml]}\n")
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "base")
	t.Chdir(dir)
	clusters := func() []string {
		out, _, err := runMatrix(t, MatrixOptions{Fleet: "fleet.yaml", ChangedSince: "HEAD"})
		if err != nil {
			t.Fatal(err)
		}
		var m ghMatrix
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range m.Include {
			names = append(names, l.Cluster)
		}
		return names
	}
	if got := clusters(); len(got) != 0 {
		t.Errorf("nothing changed: %v", got)
	}
	// Only a policy rule changed: the cluster whose runs check it.
	write("policies/eu.yaml", "policies:\n  - name: no-delete\n    deny: action == \"delete\" || action == \"replace\"\n    message: '\"no delete in eu\"'\n")
	if got := clusters(); len(got) != 1 || got[0] != "eu" {
		t.Errorf("eu's policy file changed: %v, want [eu]", got)
	}
	git("commit", "-qam", "policy")
	write("clusters/us.yaml", "# us, changed\n")
	if got := clusters(); len(got) != 1 || got[0] != "us" {
		t.Errorf("us's overlay changed: %v, want [us]", got)
	}
	// A file no spec reads (khook files' list) touches no cluster; a
	// manifest the spec reads touches both.
	write("README.md", "# the fleet, changed\n")
	if got := clusters(); len(got) != 1 || got[0] != "us" {
		t.Errorf("a README changed too: %v, want [us]", got)
	}
	write("manifests/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c2}\n")
	if got := clusters(); len(got) != 2 {
		t.Errorf("a manifest the spec reads changed: %v, want both", got)
	}
	write("khook.yaml", "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: d2}\nsteps: [{name: w, timeout: 1s, wait: {for: delete, on: pods/x}}]\n")
	if got := clusters(); len(got) != 2 {
		t.Errorf("the shared spec changed: %v, want both", got)
	}
}
