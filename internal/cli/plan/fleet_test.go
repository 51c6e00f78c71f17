package plan

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
)

// A fleet-wide plan maps its result through the one exit-code table:
// --detailed-exitcode exits 2 when a cluster changes and none fails, 1 when
// one fails; and a cluster whose plan predicts a failure says why in the
// fleet report, which shows no failing cluster's plan.
func TestLiveFleetPlanExitCodeAndWhy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"khook.yaml":       "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: d}\nsteps:\n  - name: cm\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: khook-fleet-cm, namespace: default}\n",
		"policies/eu.yaml": "policies:\n  - name: no-configmaps-in-eu\n    deny: object.kind == \"ConfigMap\"\n    message: '\"no ConfigMap in eu\"'\n",
		"fleet.yaml":       "apiVersion: khook.io/v1\nkind: Fleet\nmetadata: {name: f}\nfiles: [khook.yaml]\nclusters:\n  - {name: eu, context: eu, labels: {region: eu}, policies: [policies/eu.yaml]}\n  - {name: us, context: us, labels: {region: us}}\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var w writes
	c := w.clients(t)
	run := func(selector, output string, detailed bool) (string, int) {
		t.Helper()
		ios, out, errOut := iostreams.Test("")
		opts := &Options{F: cmdutil.NewFactory(ios), Output: output, DetailedExitCode: detailed, Clients: c,
			Spec:  cmdutil.SpecFlags{VarPrefix: cmdutil.DefaultVarPrefix, SecretPrefix: cmdutil.DefaultSecretPrefix},
			Fleet: cmdutil.FleetFlags{Fleet: filepath.Join(dir, "fleet.yaml"), Selector: selector, Parallel: 2},
		}
		err := Run(ctx, opts)
		if detailed {
			err = errorsExitOne(err)
		}
		if errOut.Len() > 0 {
			t.Logf("stderr: %s", errOut)
		}
		return out.String(), cmdutil.CodeOf(err)
	}

	// us alone: its ConfigMap would be created.
	for _, output := range []string{cmdutil.OutputText, cmdutil.OutputJSON} {
		if out, code := run("region=us", output, true); code != command.ExitChanges {
			t.Errorf("-o %s --detailed-exitcode, us changes: exit %d, want 2\n%s", output, code, out)
		}
	}
	if out, code := run("region=us", cmdutil.OutputJSON, false); code != command.ExitOK {
		t.Errorf("without --detailed-exitcode, us changes: exit %d, want 0\n%s", code, out)
	}

	// Both: eu's policy denies the ConfigMap, and its row says so.
	why := "the plan predicts that 1 step would fail on apply: step cm: policy no-configmaps-in-eu denies ConfigMap default/khook-fleet-cm: no ConfigMap in eu"
	out, code := run("", cmdutil.OutputText, true)
	if code != command.ExitFailure || !strings.Contains(out, why) {
		t.Errorf("text, eu fails: exit %d (want 1), want %q in\n%s", code, why, out)
	}
	out, code = run("", cmdutil.OutputJSON, false)
	var rep model.FleetReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != command.ExitFailure {
		t.Fatalf("json, eu fails: exit %d (want 1), %v\n%s", code, err, out)
	}
	for _, row := range rep.Clusters {
		if row.Cluster == "eu" && (row.Outcome != model.FleetFailed || !strings.HasPrefix(row.Error, why) || strings.Contains(row.Error, "\n")) {
			t.Errorf("eu's row: %+v, want failed with one line starting %q", row, why)
		}
	}
	if n := w.n.Load(); n != 0 {
		t.Errorf("the fleet plans sent %d writes, want none", n)
	}
}
