package state_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/spec"
)

// fakeApply stands in for the executors: step a creates a ConfigMap (so an
// out-of-band delete shows whether a resumed run touched it), b fails while
// failB is set, and every call is counted.
type fakeApply struct {
	ns    string
	mu    sync.Mutex
	calls []string
	failB bool
}

func (f *fakeApply) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	f.mu.Lock()
	f.calls = append(f.calls, st.Name)
	failB := f.failB
	f.mu.Unlock()
	switch st.Name {
	case "a":
		_, err := state.SharedCluster().Client.CoreV1().ConfigMaps(f.ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return runner.Outcome{}, err
		}
		return runner.Outcome{Detail: "created configmap a"}, nil
	case "b":
		if failB {
			return runner.Outcome{}, errors.New("b failed: password hunter2 rejected")
		}
	}
	return runner.Outcome{Detail: "done"}, nil
}

func (f *fakeApply) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	sort.Strings(out)
	return out
}

func resumeSpec(t *testing.T, ns string) *spec.Spec {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a-values.yaml"), []byte("replicas: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &spec.Spec{
		APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "resume"},
		State:   &spec.State{Enabled: true, Namespace: ns, Name: "khook-state-resume"},
		BaseDir: dir,
		Steps: []*spec.Step{
			{Name: "a", Helm: &spec.Helm{Chart: "demo", Repo: "https://charts.example", Release: "a", Namespace: ns,
				ValuesFrom: []spec.Source{{File: "./a-values.yaml"}}}},
			{Name: "b", Needs: []string{"a"}, Wait: &spec.Wait{For: "condition=Ready", On: "pods", Namespace: ns}},
			{Name: "c", Needs: []string{"b"}, Job: &spec.Job{Image: "busybox", Namespace: ns}},
		},
	}
}

// applyOnce is what the CLI's apply does with a record: open, run, close.
func applyOnce(t *testing.T, ctx context.Context, s *spec.Spec, exec runner.Executor, rd *redact.Redactor,
	onFinish func(model.StepResult)) ([]model.StepResult, error) {
	t.Helper()
	sess, err := state.Open(ctx, s, state.Options{Client: state.SharedCluster().Client, Version: "test", Redactor: rd})
	if err != nil {
		return nil, err
	}
	eng := runner.ForSpec(s, exec)
	eng.Redactor = rd
	eng.Resume = sess.Resume
	eng.OnFinish = func(r model.StepResult) {
		sess.OnFinish(r)
		if onFinish != nil {
			onFinish(r)
		}
	}
	res := eng.Run(ctx)
	return res, sess.Close(ctx)
}

func load(t *testing.T, ctx context.Context, s *spec.Spec) *state.Record {
	t.Helper()
	ref, _ := state.RefFor(s)
	rec, err := state.NewStore(state.SharedCluster().Client, ref).Load(ctx)
	if err != nil || rec == nil {
		t.Fatalf("loading the record: %v, %v", rec, err)
	}
	return rec
}

func statuses(rec *state.Record) string {
	var parts []string
	for _, n := range []string{"a", "b", "c"} {
		parts = append(parts, n+"="+rec.Steps[n].Status)
	}
	return strings.Join(parts, " ")
}

func TestRecordResumesPerStep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kube := state.SharedCluster()
	ns := kube.Namespace(t)
	s := resumeSpec(t, ns)
	rd := redact.New()
	rd.Add("hunter2")
	exec := &fakeApply{ns: ns, failB: true}

	// Run 1 fails at b; the journal is written after every step.
	var journaled []string
	_, err := applyOnce(t, ctx, s, exec, rd, func(r model.StepResult) {
		rec := load(t, ctx, s)
		if _, ok := rec.Steps[r.Name]; !ok {
			t.Errorf("step %s finished but the record does not have it yet", r.Name)
		}
		journaled = append(journaled, r.Name)
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := load(t, ctx, s)
	if got := statuses(rec); got != "a=ok b=failed c=skipped" || rec.RunStatus != state.RunFailed {
		t.Fatalf("after run 1: %s, runStatus %s; want a=ok b=failed c=skipped, failed", got, rec.RunStatus)
	}
	if e := rec.Steps["b"].Error; strings.Contains(e, "hunter2") || !strings.Contains(e, "***") {
		t.Errorf("b's stored error %q is not redacted", e)
	}
	if len(journaled) != 3 {
		t.Errorf("journaled %v, want a write per step", journaled)
	}
	if got := exec.take(); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("run 1 executed %v, want [a b]", got)
	}

	// Delete a's object out-of-band: a resumed run must not recreate it.
	if err := kube.Client.CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := state.GetStatus(ctx, kube.Client, s, nil)
	if err != nil || !st.Found || st.SpecChanged || fmt.Sprint(st.ResumableSteps) != "[a]" {
		t.Fatalf("status before run 2 = %+v, %v; want found, unchanged, resumable [a]", st, err)
	}
	exec.failB = false
	res, err := applyOnce(t, ctx, s, exec, rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != model.StatusSkipped || res[0].SkipReason != state.ResumeReason {
		t.Errorf("run 2 reported a as %s (%s), want skipped with the resume reason", res[0].Status, res[0].SkipReason)
	}
	if got := exec.take(); fmt.Sprint(got) != "[b c]" {
		t.Fatalf("run 2 executed %v, want [b c]", got)
	}
	if _, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a's ConfigMap after the resumed run: %v, want it still deleted", err)
	}
	rec = load(t, ctx, s)
	if got := statuses(rec); got != "a=ok b=ok c=ok" || rec.RunStatus != state.RunSucceeded {
		t.Fatalf("after run 2: %s, runStatus %s", got, rec.RunStatus)
	}

	// Nothing changed: nothing runs.
	if _, err := applyOnce(t, ctx, s, exec, rd, nil); err != nil {
		t.Fatal(err)
	}
	if got := exec.take(); len(got) != 0 {
		t.Fatalf("run 3 executed %v, want nothing", got)
	}

	// Editing the values file a references re-runs a, and only a.
	if err := os.WriteFile(filepath.Join(s.BaseDir, "a-values.yaml"), []byte("replicas: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = state.GetStatus(ctx, kube.Client, s, nil)
	if err != nil || !st.SpecChanged || fmt.Sprint(st.ResumableSteps) != "[b c]" {
		t.Fatalf("status after the edit = %+v, %v; want specChanged, resumable [b c]", st, err)
	}
	if _, err := applyOnce(t, ctx, s, exec, rd, nil); err != nil {
		t.Fatal(err)
	}
	if got := exec.take(); fmt.Sprint(got) != "[a]" {
		t.Fatalf("run 4 executed %v, want [a]", got)
	}
}

func TestConcurrentAppliesOneFailsFast(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kube := state.SharedCluster()
	s := resumeSpec(t, kube.Namespace(t))
	var wg sync.WaitGroup
	opened := make(chan *state.Session, 2)
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			sess, err := state.Open(ctx, s, state.Options{Client: kube.Client, Version: "test"})
			if err != nil {
				errs <- err
				return
			}
			opened <- sess
		})
	}
	wg.Wait() // both have tried before either lets go
	close(opened)
	close(errs)
	var sessions []*state.Session
	for sess := range opened {
		sessions = append(sessions, sess)
	}
	var failures []error
	for err := range errs {
		failures = append(failures, err)
	}
	if len(sessions) != 1 || len(failures) != 1 || !state.IsLocked(failures[0]) {
		t.Fatalf("two concurrent opens: %d held, errors %v; want one held and one state-locked", len(sessions), failures)
	}
	if !sessions[0].Held() {
		t.Error("the open session does not report its lock held")
	}
	if (*state.Session)(nil).Held() {
		t.Error("no session (no state: block) reports a lock held")
	}
	if err := sessions[0].Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesForeignRecordWithoutLocking(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kube := state.SharedCluster()
	ns := kube.Namespace(t)
	s := resumeSpec(t, ns)
	if _, err := kube.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: s.State.Name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := state.Open(ctx, s, state.Options{Client: kube.Client})
	if !state.IsForeign(err) {
		t.Fatalf("Open = %v, want the foreign-Secret refusal", err)
	}
	if _, err := kube.Client.CoordinationV1().Leases(ns).Get(ctx, s.State.Name+"-lock", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a Lease was left beside a foreign Secret: %v", err)
	}
}

func TestRunStatusIsFailedWhenAStepNeverStarted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kube := state.SharedCluster()
	s := resumeSpec(t, kube.Namespace(t))
	s.Steps[2].Skip = spec.SkipWhen
	sess, err := state.Open(ctx, s, state.Options{Client: kube.Client})
	if err != nil {
		t.Fatal(err)
	}
	// The run was interrupted after a: b never started; c is excluded.
	sess.OnFinish(model.StepResult{Name: "a", Status: model.StatusOK, Attempts: 1})
	sess.OnFinish(model.StepResult{Name: "b", Status: model.StatusSkipped, Skip: spec.SkipStopped, SkipReason: "not run: the run was cancelled"})
	sess.OnFinish(model.StepResult{Name: "c", Status: model.StatusSkipped, Skip: spec.SkipWhen, SkipReason: "excluded"})
	if err := sess.Close(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
	if rec := load(t, ctx, s); rec.RunStatus != state.RunFailed || rec.Steps["a"].Status != state.StepOK {
		t.Fatalf("record = %+v, want runStatus failed with a ok", rec)
	}
}

// A secret declared immutable is recorded as a hash: the record never holds
// it, and the refusal does not print it.
func TestImmutableSecretInputIsRecordedAsAHash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := state.SharedCluster().Namespace(t)
	file := filepath.Join(t.TempDir(), "khook.yaml")
	doc := fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: immutable-secret}
state: {namespace: %s}
vars:
  TOKEN: {type: string, required: true, immutable: true}
steps:
  - name: a
    job: {image: busybox, env: {TOKEN: "${TOKEN}"}}
`, ns)
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	exec := runner.ExecutorFunc(func(ctx context.Context, st *spec.Step) (runner.Outcome, error) { return runner.Outcome{}, nil })
	apply := func(token string) error {
		rd := redact.New()
		s, err := spec.Load(spec.LoadOptions{Files: []string{file}, Environ: []string{"KHOOK_SECRET_TOKEN=" + token},
			VarPrefix: "KHOOK_VAR_", SecretPrefix: "KHOOK_SECRET_", Redactor: rd})
		if err != nil {
			t.Fatal(err)
		}
		_, err = applyOnce(t, ctx, s, exec, rd, nil)
		return err
	}
	if err := apply("s3cret-one"); err != nil {
		t.Fatal(err)
	}
	sec, err := state.SharedCluster().Client.CoreV1().Secrets(ns).Get(ctx, "khook-state-immutable-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if raw := string(sec.Data[state.DataKey]); strings.Contains(raw, "s3cret-one") || !strings.Contains(raw, `"TOKEN":"secret-sha256:`) {
		t.Fatalf("record holds %s", raw)
	}
	err = apply("s3cret-two")
	var ie *state.ImmutableError
	if !errors.As(err, &ie) || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "TOKEN was a secret value (***)") {
		t.Fatalf("changed secret input: %v", err)
	}
}
