package state

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/test/cluster"
)

var kube *cluster.Cluster

func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &kube)) }

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestStoreRoundTripAndOptimisticConcurrency(t *testing.T) {
	ctx := ctxFor(t)
	ref := Ref{Namespace: kube.Namespace(t), Name: "khook-state-demo"}
	s := NewStore(kube.Client, ref)
	if rec, err := s.Load(ctx); err != nil || rec != nil {
		t.Fatalf("Load on an empty namespace = %v, %v; want nil, nil", rec, err)
	}
	rec := &Record{SpecName: "demo", SpecHash: "sha256:x", RunStatus: RunRunning,
		Steps: map[string]StepRecord{"a": {Hash: "h", Status: StepOK}}}
	if err := s.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	sec, err := kube.Client.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Type != corev1.SecretTypeOpaque || sec.Labels[ManagedByLabel] != ManagedByValue || len(sec.Data[DataKey]) == 0 {
		t.Fatalf("record Secret = type %s labels %v keys %d; want an Opaque, khook-labelled Secret with %s", sec.Type, sec.Labels, len(sec.Data), DataKey)
	}

	// A second writer that read the same version loses the race.
	other := NewStore(kube.Client, ref)
	if _, err := other.Load(ctx); err != nil {
		t.Fatal(err)
	}
	rec.RunStatus = RunSucceeded
	if err := s.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	var conflict *ConflictError
	if err := other.Save(ctx, rec); !errors.As(err, &conflict) {
		t.Fatalf("stale write = %v, want a ConflictError", err)
	}
	got, err := NewStore(kube.Client, ref).Load(ctx)
	if err != nil || got.RunStatus != RunSucceeded || got.Steps["a"].Status != StepOK {
		t.Fatalf("Load = %+v, %v; want the succeeded record", got, err)
	}
	if err := s.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx); err != nil {
		t.Fatalf("deleting an absent record: %v", err)
	}
}

func TestForeignSecretIsRefused(t *testing.T) {
	ctx := ctxFor(t)
	ref := Ref{Namespace: kube.Namespace(t), Name: "taken"}
	_, err := kube.Client.CoreV1().Secrets(ref.Namespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: ref.Name},
		StringData: map[string]string{"password": "keep me"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := NewStore(kube.Client, ref)
	_, err = s.Load(ctx)
	if !IsForeign(err) || !strings.Contains(err.Error(), "not managed by khook; choose another state.name") {
		t.Fatalf("Load = %v, want the foreign-Secret refusal", err)
	}
	if err := s.Save(ctx, &Record{}); !IsForeign(err) {
		t.Fatalf("Save over a foreign Secret = %v, want the refusal", err)
	}
	if err := s.Delete(ctx); !IsForeign(err) {
		t.Fatalf("Delete of a foreign Secret = %v, want the refusal", err)
	}
	sec, err := kube.Client.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil || string(sec.Data["password"]) != "keep me" {
		t.Fatalf("the foreign Secret was touched: %v %v", sec, err)
	}
}

func TestLockFailsFastThenWaitsForRelease(t *testing.T) {
	ctx := ctxFor(t)
	ref := Ref{Namespace: kube.Namespace(t), Name: "khook-state-lock"}
	first, err := Acquire(ctx, kube.Client, ref, LockOptions{Identity: "ci-runner-1:42:aaaa"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(ctx, kube.Client, ref, LockOptions{Identity: "ci-runner-2:7:bbbb"})
	var locked *LockedError
	if !errors.As(err, &locked) {
		t.Fatalf("second Acquire = %v, want a LockedError", err)
	}
	if locked.FailureReason() != "state-locked" || !strings.Contains(err.Error(), "locked by ci-runner-1:42:aaaa since ") ||
		!strings.Contains(err.Error(), "--lock-timeout") || !strings.Contains(err.Error(), ref.String()) {
		t.Errorf("locked error = %q (reason %s)", err, locked.FailureReason())
	}

	// A waiting run gets the lock once the holder releases it.
	got := make(chan error, 1)
	go func() {
		l, err := Acquire(ctx, kube.Client, ref, LockOptions{Identity: "ci-runner-2:7:bbbb", Timeout: 45 * time.Second})
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiting Acquire = %v, want the lock", err)
	}
	if _, err := kube.Client.CoordinationV1().Leases(ref.Namespace).Get(ctx, ref.lockName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Lease after both released: %v, want it gone", err)
	}
}

func TestExpiredLockIsTakenOver(t *testing.T) {
	ctx := ctxFor(t)
	ref := Ref{Namespace: kube.Namespace(t), Name: "khook-state-dead"}
	holder, secs := "killed-run:1:dead", int32(30)
	past := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	_, err := kube.Client.CoordinationV1().Leases(ref.Namespace).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: ref.lockName()},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs,
			AcquireTime: &past, RenewTime: &past},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(ctx, kube.Client, ref, LockOptions{Identity: "next-run:2:beef"})
	if err != nil {
		t.Fatalf("Acquire over an expired lease = %v, want a takeover", err)
	}
	lease, err := kube.Client.CoordinationV1().Leases(ref.Namespace).Get(ctx, ref.lockName(), metav1.GetOptions{})
	if err != nil || *lease.Spec.HolderIdentity != "next-run:2:beef" || lease.Spec.LeaseTransitions == nil || *lease.Spec.LeaseTransitions != 1 {
		t.Fatalf("lease after takeover = %+v, %v", lease, err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLockIsRenewedWhileHeld(t *testing.T) {
	ctx := ctxFor(t)
	ref := Ref{Namespace: kube.Namespace(t), Name: "khook-state-renew"}
	l, err := Acquire(ctx, kube.Client, ref, LockOptions{Identity: "renewer:1:cafe", LeaseDuration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	first, err := kube.Client.CoordinationV1().Leases(ref.Namespace).Get(ctx, ref.lockName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Await a renewal through a watch rather than sleeping.
	w, err := kube.Client.CoordinationV1().Leases(ref.Namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		lease, ok := ev.Object.(*coordinationv1.Lease)
		if ok && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(first.Spec.RenewTime.Time) {
			return
		}
	}
	t.Fatal("the watch ended without a renewal")
}

func TestLockTimeoutRunsOut(t *testing.T) {
	ctx := ctxFor(t)
	ref := Ref{Namespace: kube.Namespace(t), Name: "khook-state-timeout"}
	held, err := Acquire(ctx, kube.Client, ref, LockOptions{Identity: "holder:1:aaaa"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	// A clock past the deadline makes the wait run out without sleeping.
	calls := 0
	now := func() time.Time {
		calls++
		if calls > 1 {
			return time.Now().Add(2 * time.Second)
		}
		return time.Now()
	}
	_, err = Acquire(ctx, kube.Client, ref, LockOptions{Identity: "waiter:2:bbbb", Timeout: time.Second, Now: now})
	if !IsLocked(err) || !strings.Contains(err.Error(), "still held after waiting 1s") {
		t.Fatalf("Acquire after the timeout = %v, want a LockedError saying it waited", err)
	}
}

func TestMissingRecordNamespaceIsExplained(t *testing.T) {
	ctx := ctxFor(t)
	ref := Ref{Namespace: "no-such-namespace-for-khook", Name: "khook-state-x"}
	_, err := Acquire(ctx, kube.Client, ref, LockOptions{})
	if err == nil || !strings.Contains(err.Error(), "namespace no-such-namespace-for-khook does not exist; create it before the run or choose another state.namespace") {
		t.Fatalf("Acquire in a missing namespace = %v", err)
	}
	if err := NewStore(kube.Client, ref).Save(ctx, &Record{}); err == nil || !strings.Contains(err.Error(), "choose another state.namespace") {
		t.Fatalf("Save in a missing namespace = %v", err)
	}
}
