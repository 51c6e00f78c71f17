package state_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/spec"
)

const immutableSpec = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: immutable}
state: {namespace: %s}
vars:
  CLUSTER: {type: string, format: dns-label, required: true, immutable: true, description: the cluster name}
  SIZE: {type: int, default: 1}
steps:
  - name: a
    job: {image: "busybox:${CLUSTER}-${SIZE}"}
`

// An immutable input is recorded by the first apply; a second apply that
// changes it is refused before any step runs, and one that keeps it (while
// a mutable input changes) goes ahead.
func TestImmutableInputChangeIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := state.SharedCluster().Namespace(t)
	file := filepath.Join(t.TempDir(), "khook.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(immutableSpec, ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	ran := 0
	exec := runner.ExecutorFunc(func(ctx context.Context, st *spec.Step) (runner.Outcome, error) { ran++; return runner.Outcome{}, nil })
	apply := func(set ...string) error {
		rd := redact.New()
		s, err := spec.Load(spec.LoadOptions{Files: []string{file}, Set: set, Redactor: rd})
		if err != nil {
			t.Fatal(err)
		}
		_, err = applyOnce(t, ctx, s, exec, rd, nil)
		return err
	}
	if err := apply("CLUSTER=eu-1"); err != nil {
		t.Fatal(err)
	}
	s := &spec.Spec{Metadata: spec.Metadata{Name: "immutable"}, State: &spec.State{Enabled: true, Namespace: ns}}
	if rec := load(t, ctx, s); rec.Inputs["CLUSTER"] != "eu-1" || len(rec.Inputs) != 1 {
		t.Errorf("recorded inputs: %v", rec.Inputs)
	}
	err := apply("CLUSTER=us-2")
	var ie *state.ImmutableError
	if !errors.As(err, &ie) || ie.FailureReason() != model.ReasonValidation || ran != 1 {
		t.Fatalf("changed CLUSTER: err %v, %d runs", err, ran)
	}
	want := `refusing to run: this run changes an immutable input recorded in state record ` + ns + `/khook-state-immutable: CLUSTER was "eu-1" and is now "us-2". An immutable input is fixed once a run has used it; run khook destroy first (it deletes the record), or pass the recorded value`
	if err.Error() != want {
		t.Errorf("error:\n%v\nwant\n%s", err, want)
	}
	// The refused run left the lock free and the record as it was.
	if err := apply("CLUSTER=eu-1", "SIZE=3"); err != nil || ran != 2 {
		t.Fatalf("same CLUSTER: %v, %d runs", err, ran)
	}
	if rec := load(t, ctx, s); rec.Inputs["CLUSTER"] != "eu-1" {
		t.Errorf("recorded inputs after: %v", rec.Inputs)
	}
}
