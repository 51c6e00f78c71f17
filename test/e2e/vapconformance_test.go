package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
)

// Admission conformance (#49 point 7): real ValidatingAdmissionPolicies
// (test/testdata/vap/SOURCES.md) judged by khook plan --policy, offline
// and live, and by the test control plane's own admission with the policy
// and its binding installed. A live plan must agree with the server on
// every object; an offline plan must agree or say, in a policy note, that
// it did not assess that policy.

// vapPolicy is one vendored policy: its directory and cases.json.
type vapPolicy struct {
	Policy string    `json:"policy"`
	Source string    `json:"source"`
	Cases  []vapCase `json:"cases"`
	// Namespace is where the objects are judged (a binding selecting
	// one by name), else a namespace of the test's own; NamespaceLabels
	// label it first (a binding's namespaceSelector, namespaceObject).
	Namespace       string            `json:"namespace,omitempty"`
	NamespaceLabels map[string]string `json:"namespaceLabels,omitempty"`
	// Refused: the API server refuses the policy or its binding itself,
	// so khook validate must too; no objects to judge.
	Refused bool `json:"refused,omitempty"`
	dir     string
}

// vapCase is one object with upstream's expectation (pass or fail).
type vapCase struct {
	Name     string `json:"name"`
	Object   string `json:"object"`
	Expected string `json:"expected"`
}

// policyFiles are the --policy files: the policy, its binding, its params.
func (p vapPolicy) policyFiles() []string {
	files := []string{filepath.Join(p.dir, "policy.yaml"), filepath.Join(p.dir, "binding.yaml")}
	if params := filepath.Join(p.dir, "params.yaml"); fileExists(params) {
		files = append(files, params)
	}
	return files
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// vapTally is one policy's row of the figures.
type vapTally struct {
	name                               string
	cases, refused, upstream           int
	liveAgree, liveDisagree            int
	offAgree, offFlagged, offUnflagged int
}

func vapDir(parts ...string) string {
	return filepath.Join(append([]string{repoRoot, "test", "testdata", "vap"}, parts...)...)
}

func loadVAPPolicies(t *testing.T) []vapPolicy {
	t.Helper()
	ps := loadVAPDir(t, vapDir())
	if len(ps) < 15 {
		t.Fatalf("%s holds %d policies with a cases.json, want at least 15", vapDir(), len(ps))
	}
	return ps
}

// loadVAPDir reads every DIR/*/cases.json.
func loadVAPDir(t *testing.T, dir string) []vapPolicy {
	t.Helper()
	indexes, err := filepath.Glob(filepath.Join(dir, "*", "cases.json"))
	must(t, err)
	var ps []vapPolicy
	for _, index := range indexes {
		data, err := os.ReadFile(index)
		must(t, err)
		p := vapPolicy{dir: filepath.Dir(index)}
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatalf("%s: %v", index, err)
		}
		ps = append(ps, p)
	}
	return ps
}

func TestVAPConformance(t *testing.T) {
	policies := loadVAPPolicies(t)
	srv := newAPIServer(t)
	// The params' kind: served for the server's paramRef, and known to a
	// live plan's mapping, before any policy is judged.
	srv.installCRD(t, vapDir("kubescape-controlconfiguration-crd.yaml"))
	ns := namespace(t)
	var rows []vapTally
	for _, p := range policies {
		t.Run(filepath.Base(p.dir), func(t *testing.T) {
			rows = append(rows, conformPolicy(t, srv, p, ns))
		})
	}
	t.Log("admission conformance, khook plan --policy against the API server's dry-run create:\n" + vapTable(rows))
}

// conformPolicy judges p's objects with khook (the policy not installed:
// khook alone decides), then with the server (installed), and compares.
func conformPolicy(t *testing.T, srv *apiServer, p vapPolicy, ns string) vapTally {
	row := vapTally{name: filepath.Base(p.dir), cases: len(p.Cases)}
	live := khookVerdicts(t, p, ns, false)
	offline := khookVerdicts(t, p, ns, true)

	var objs []*unstructured.Unstructured
	for _, c := range p.Cases {
		objs = append(objs, readObjects(t, filepath.Join(p.dir, c.Object))[0])
	}
	// Cleanups run last first: the deletes below, then this await, so the
	// next policy's server sees none of this one (t.Context is done by then).
	t.Cleanup(func() {
		if err := srv.awaitEnforcing(context.Background(), false, p.Policy, ns, objs); err != nil {
			t.Errorf("the API server still enforces %s a minute after its deletion: %v", p.Policy, err)
		}
	})
	for _, f := range append([]string{}, p.policyFiles()[2:]...) {
		srv.install(t, f) // params first: the binding's paramRef is Deny when missing
	}
	srv.install(t, filepath.Join(p.dir, "policy.yaml"))
	srv.install(t, filepath.Join(p.dir, "binding.yaml"))
	if err := srv.awaitEnforcing(t.Context(), true, p.Policy, ns, objs); err != nil {
		t.Fatalf("the API server denied none of %s's %d objects within a minute of installing it: either it never enforced it or it admits them all (%v); the comparison would prove nothing", p.Policy, len(objs), err)
	}
	for i, c := range p.Cases {
		server, err := srv.admit(t.Context(), objs[i], ns, p.Policy)
		must(t, err)
		compareCase(t, &row, c, server, live[i], offline[i])
	}
	return row
}

// compareCase adds one object's verdicts to row; a disagreement the
// conformance does not allow fails the test.
func compareCase(t *testing.T, row *vapTally, c vapCase, server verdict, live, offline khookVerdict) {
	t.Helper()
	if server.Effect == verdictRefused {
		row.refused++
		t.Logf("%s: the API server refuses the object itself, not by the policy (no verdict to compare): %s; khook live: %s", c.Name, server.Message, live.verdict)
		return
	}
	if (server.Effect == verdictDeny) != (c.Expected == "fail") {
		row.upstream++
		t.Logf("%s: upstream expects %s, the API server says %s", c.Name, c.Expected, server)
	}
	if live.verdict.Effect == server.Effect {
		row.liveAgree++
	} else {
		row.liveDisagree++
		t.Errorf("%s (%s): the API server says %s, khook plan (live) says %s (notes: %q)", c.Name, c.Object, server, live.verdict, live.notes)
	}
	switch {
	case offline.verdict.Effect == server.Effect:
		row.offAgree++
	case len(offline.notes) > 0:
		row.offFlagged++
		t.Logf("%s: offline %s, the API server %s; flagged: %s", c.Name, offline.verdict.Effect, server.Effect, strings.Join(offline.notes, "; "))
	default:
		row.offUnflagged++
		t.Errorf("%s (%s): the API server says %s, khook plan --offline says %s and no policy note names the policy", c.Name, c.Object, server, offline.verdict)
	}
}

// khookVerdict is khook plan's verdict on one object by the policy under
// test, and the plan's notes that name that policy.
type khookVerdict struct {
	verdict verdict
	notes   []string
	audit   string // an Audit binding's failure: admitted, shown as audit
}

// khookVerdicts plans each of p's objects alone, two plans at a time
// (the machine's cores).
func khookVerdicts(t *testing.T, p vapPolicy, ns string, offline bool) []khookVerdict {
	t.Helper()
	out := make([]khookVerdict, len(p.Cases))
	errs := make([]error, len(p.Cases))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, c := range p.Cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = planVerdict(t, p, c, ns, offline)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// vapSpec applies one object (object.yaml beside it) in ns.
const vapSpec = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: vap-conformance
steps:
  - name: object
    apply:
      namespace: %s
      manifests:
        - file: object.yaml
`

// planVerdict runs khook plan -o json on a spec applying c's object with
// p's files as --policy, and reads the step's violations and the notes.
func planVerdict(t *testing.T, p vapPolicy, c vapCase, ns string, offline bool) (khookVerdict, error) {
	dir := t.TempDir()
	obj, err := os.ReadFile(filepath.Join(p.dir, c.Object))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "object.yaml"), obj, 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "khook.yaml"), []byte(fmt.Sprintf(vapSpec, ns)), 0o644)
	}
	if err != nil {
		return khookVerdict{}, err
	}
	args := []string{"plan", "-f", "khook.yaml", "-o", "json"}
	for _, f := range p.policyFiles() {
		args = append(args, "--policy", f)
	}
	if offline {
		args = append(args, "--offline")
	}
	cmd, stdout, stderr := command(t, invocation{Args: args, Dir: dir})
	runErr := cmd.Run()
	if cmd.ProcessState == nil {
		return khookVerdict{}, fmt.Errorf("cannot run khook %s: %v", strings.Join(args, " "), runErr)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
		return khookVerdict{}, fmt.Errorf("khook %s on %s: exit %d (%v)\n%s", strings.Join(args, " "), c.Object, code, runErr, stderr)
	}
	var plan model.Plan
	if err := json.Unmarshal(stdout.Bytes(), &plan); err != nil {
		return khookVerdict{}, fmt.Errorf("khook %s on %s: stdout is not a plan: %v\n%s%s", strings.Join(args, " "), c.Object, err, stdout, stderr)
	}
	return readVerdict(plan, p.Policy)
}

// readVerdict is the plan's verdict on its one step by policy.
func readVerdict(plan model.Plan, policy string) (khookVerdict, error) {
	var kv khookVerdict
	for _, n := range plan.PolicyNotes {
		if strings.HasPrefix(n, "not assessed offline: "+policy+": ") || strings.HasPrefix(n, "not assessed: "+policy+": ") {
			kv.notes = append(kv.notes, n)
		}
	}
	if len(plan.Steps) != 1 {
		return kv, fmt.Errorf("the plan has %d steps, want the one step object", len(plan.Steps))
	}
	step := plan.Steps[0]
	kv.verdict = verdict{Effect: verdictAdmit}
	for _, v := range step.Policy {
		if !strings.HasPrefix(v.Policy, policy+" ") {
			continue
		}
		switch {
		case v.Effect == model.EffectDeny:
			return khookVerdict{verdict: verdict{verdictDeny, v.Message}, notes: kv.notes, audit: kv.audit}, nil
		case v.Effect == model.EffectWarn:
			kv.verdict = verdict{verdictWarn, v.Message}
		case v.Effect == model.EffectAudit:
			kv.audit = v.Message
		}
	}
	if step.Action == model.ActionFail {
		kv.verdict = verdict{verdictRefused, step.Reason}
	}
	return kv, nil
}

// vapTable is the figures: per policy and in total, how many objects the
// live and offline plans judged as the server did, and how many they did
// not (offline: flagged by a note or not).
func vapTable(rows []vapTally) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "policy\tobjects\tlive agree\tlive disagree\toffline agree\toffline disagree, flagged\toffline disagree, unflagged\tserver refused\tserver≠upstream\t")
	line := func(r vapTally) {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", r.name, r.cases, r.liveAgree, r.liveDisagree, r.offAgree, r.offFlagged, r.offUnflagged, r.refused, r.upstream)
	}
	sum := vapTally{name: "total"}
	for _, r := range rows {
		line(r)
		sum.cases += r.cases
		sum.liveAgree += r.liveAgree
		sum.liveDisagree += r.liveDisagree
		sum.offAgree += r.offAgree
		sum.offFlagged += r.offFlagged
		sum.offUnflagged += r.offUnflagged
		sum.refused += r.refused
		sum.upstream += r.upstream
	}
	line(sum)
	w.Flush()
	return b.String()
}
