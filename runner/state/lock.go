package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/khook/khook/model"
)

// DefaultLeaseDuration is how long a lock outlives its last renewal: a run
// that was killed frees the record this long after its last sign of life.
const DefaultLeaseDuration = 30 * time.Second

// LockOptions tune Acquire. The zero value fails at once on a held lock.
type LockOptions struct {
	// Timeout is how long to wait for a lock another run holds (--lock-timeout);
	// zero fails at once with a LockedError.
	Timeout time.Duration
	// LeaseDuration defaults to DefaultLeaseDuration; the lock is renewed
	// every third of it.
	LeaseDuration time.Duration
	// Identity names this run in the Lease; default host:pid:random.
	Identity string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// LockedError says another run holds the record's lock.
type LockedError struct {
	Ref     Ref
	Holder  string
	Since   time.Time
	Expires time.Time
	Waited  time.Duration // the --lock-timeout that ran out; 0 for fail-fast
}

func (e *LockedError) Error() string {
	advice := "wait or pass --lock-timeout"
	if e.Waited > 0 {
		advice = fmt.Sprintf("still held after waiting %s; wait for that run to finish or pass a longer --lock-timeout", e.Waited)
	}
	return fmt.Sprintf("%s is locked by %s since %s (lock expires at %s unless renewed); %s",
		e.Ref.describe(), e.Holder, e.Since.UTC().Format(time.RFC3339), e.Expires.UTC().Format(time.RFC3339), advice)
}

// FailureReason is the CI failure reason of a locked record.
func (e *LockedError) FailureReason() string { return model.ReasonStateLocked }

// IsLocked reports whether err is (or wraps) a LockedError.
func IsLocked(err error) bool {
	var l *LockedError
	return errors.As(err, &l)
}

// Lock is a held Lease beside a record, renewed in the background until Release.
type Lock struct {
	client   kubernetes.Interface
	ref      Ref
	identity string
	duration time.Duration
	now      func() time.Time

	mu    sync.Mutex
	lease *coordinationv1.Lease

	stop     chan struct{}
	done     chan struct{}
	lost     chan struct{}
	lostErr  error
	stopOnce sync.Once
}

// Identity is the holder identity this lock writes.
func (l *Lock) Identity() string { return l.identity }

// Lost is closed when another run took the lock over (this run stopped
// renewing in time); Err then says why.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Err is why the lock was lost, nil while it is held.
func (l *Lock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErr
}

// Acquire takes the record's lock: it creates the Lease, takes over an
// expired one, or — while another run holds it — fails at once with a
// LockedError or waits (watching the Lease) up to opts.Timeout.
func Acquire(ctx context.Context, client kubernetes.Interface, ref Ref, opts LockOptions) (*Lock, error) {
	l := &Lock{client: client, ref: ref, identity: opts.Identity, duration: opts.LeaseDuration, now: opts.Now,
		stop: make(chan struct{}), done: make(chan struct{}), lost: make(chan struct{})}
	if l.identity == "" {
		l.identity = defaultIdentity()
	}
	if l.duration <= 0 {
		l.duration = DefaultLeaseDuration
	}
	if l.now == nil {
		l.now = time.Now
	}
	deadline := l.now().Add(opts.Timeout)
	leases := client.CoordinationV1().Leases(ref.Namespace)
	for {
		cur, err := leases.Get(ctx, ref.lockName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			created, err := leases.Create(ctx, l.fresh(nil), metav1.CreateOptions{FieldManager: ManagedByValue, FieldValidation: metav1.FieldValidationStrict})
			if apierrors.IsAlreadyExists(err) {
				continue // another run created it first: look again
			}
			if apierrors.IsNotFound(err) {
				return nil, missingNamespace(ref)
			}
			if err != nil {
				return nil, l.wrap("create", err)
			}
			return l.start(created), nil
		case err != nil:
			return nil, l.wrap("read", err)
		}
		holder, expires := l.holder(cur)
		if holder == "" || holder == l.identity || !l.now().Before(expires) {
			taken, err := leases.Update(ctx, l.fresh(cur), metav1.UpdateOptions{FieldManager: ManagedByValue, FieldValidation: metav1.FieldValidationStrict})
			if apierrors.IsConflict(err) {
				continue // someone else moved first: look again
			}
			if err != nil {
				return nil, l.wrap("take over", err)
			}
			return l.start(taken), nil
		}
		locked := &LockedError{Ref: ref, Holder: holder, Since: sinceOf(cur), Expires: expires, Waited: opts.Timeout}
		if opts.Timeout <= 0 || !l.now().Before(deadline) {
			return nil, locked
		}
		if err := l.awaitChange(ctx, cur, earliest(expires, deadline)); err != nil {
			return nil, err
		}
	}
}

// fresh is the Lease this run writes to take the lock (cur is the old one).
func (l *Lock) fresh(cur *coordinationv1.Lease) *coordinationv1.Lease {
	now := metav1.NewMicroTime(l.now())
	secs := int32(l.duration / time.Second)
	if secs < 1 {
		secs = 1
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: l.ref.lockName(), Namespace: l.ref.Namespace,
		Labels: map[string]string{ManagedByLabel: ManagedByValue},
	}}
	if cur != nil {
		lease = cur.DeepCopy()
		if lease.Spec.LeaseTransitions == nil {
			lease.Spec.LeaseTransitions = new(int32)
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != l.identity {
			*lease.Spec.LeaseTransitions++
		}
	}
	id := l.identity
	lease.Spec.HolderIdentity = &id
	lease.Spec.LeaseDurationSeconds = &secs
	lease.Spec.AcquireTime = &now
	lease.Spec.RenewTime = &now
	return lease
}

// holder returns who holds a Lease and when that expires.
func (l *Lock) holder(lease *coordinationv1.Lease) (string, time.Time) {
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return "", time.Time{}
	}
	last := sinceOf(lease)
	if lease.Spec.RenewTime != nil {
		last = lease.Spec.RenewTime.Time
	}
	d := l.duration
	if lease.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	}
	return *lease.Spec.HolderIdentity, last.Add(d)
}

func sinceOf(lease *coordinationv1.Lease) time.Time {
	if lease.Spec.AcquireTime != nil {
		return lease.Spec.AcquireTime.Time
	}
	return lease.CreationTimestamp.Time
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// awaitChange watches the Lease until it changes or is deleted, or until
// the moment it expires or the wait times out.
func (l *Lock) awaitChange(ctx context.Context, cur *coordinationv1.Lease, until time.Time) error {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	w, err := l.client.CoordinationV1().Leases(l.ref.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", l.ref.lockName()).String(),
		ResourceVersion: cur.ResourceVersion,
	})
	if err != nil {
		return l.wrap("watch", err)
	}
	defer w.Stop()
	select {
	case <-w.ResultChan(): // any event (or a closed watch): look again
	case <-timer.C:
	case <-ctx.Done():
		return fmt.Errorf("stopped waiting for the lock of the %s: %w", l.ref.describe(), ctx.Err())
	}
	return nil
}

func (l *Lock) wrap(verb string, err error) error {
	return fmt.Errorf("cannot %s the lock of the %s (Lease %s/%s): %w", verb, l.ref.describe(), l.ref.Namespace, l.ref.lockName(), err)
}

// start records the held Lease and begins renewing it.
func (l *Lock) start(lease *coordinationv1.Lease) *Lock {
	l.lease = lease
	go l.renew()
	return l
}

// renew refreshes renewTime every third of the lease duration until Release.
func (l *Lock) renew() {
	defer close(l.done)
	ticker := time.NewTicker(l.duration / 3)
	defer ticker.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-ticker.C:
		}
		if err := l.renewOnce(); err != nil {
			l.mu.Lock()
			l.lostErr = err
			l.mu.Unlock()
			close(l.lost)
			return
		}
	}
}

// renewOnce writes a new renewTime. A transient failure is retried on the
// next tick while the lease has not yet expired; losing the holder is final.
func (l *Lock) renewOnce() error {
	ctx, cancel := context.WithTimeout(context.Background(), l.duration/3)
	defer cancel()
	leases := l.client.CoordinationV1().Leases(l.ref.Namespace)
	l.mu.Lock()
	next := l.lease.DeepCopy()
	l.mu.Unlock()
	now := metav1.NewMicroTime(l.now())
	next.Spec.RenewTime = &now
	updated, err := leases.Update(ctx, next, metav1.UpdateOptions{FieldManager: ManagedByValue, FieldValidation: metav1.FieldValidationStrict})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		cur, gerr := leases.Get(ctx, l.ref.lockName(), metav1.GetOptions{})
		if gerr == nil && cur.Spec.HolderIdentity != nil && *cur.Spec.HolderIdentity == l.identity {
			l.mu.Lock()
			l.lease = cur
			l.mu.Unlock()
			return nil // our own lease at a newer version: renew on the next tick
		}
		holder := "another run"
		if gerr == nil && cur.Spec.HolderIdentity != nil {
			holder = *cur.Spec.HolderIdentity
		}
		return fmt.Errorf("the lock of the %s was taken over by %s: this run did not renew it in time", l.ref.describe(), holder)
	}
	if err != nil {
		_, expires := l.holder(l.lease)
		if !l.now().Before(expires) {
			return fmt.Errorf("cannot renew the lock of the %s before it expired: %w", l.ref.describe(), err)
		}
		return nil
	}
	l.mu.Lock()
	l.lease = updated
	l.mu.Unlock()
	return nil
}

// Release stops renewing and deletes the Lease if this run still holds it.
// It works on a cancelled ctx too (a run interrupted by Ctrl-C frees its lock).
func (l *Lock) Release(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
	select {
	case <-l.lost:
		return nil // not ours any more
	default:
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	l.mu.Lock()
	lease := l.lease
	l.mu.Unlock()
	err := l.client.CoordinationV1().Leases(l.ref.Namespace).Delete(ctx, lease.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return l.wrap("release", err)
	}
	return nil
}

// missingNamespace is the error for a record whose namespace does not exist.
func missingNamespace(ref Ref) error {
	return fmt.Errorf("cannot keep the %s: namespace %s does not exist; create it before the run or choose another state.namespace",
		ref.describe(), ref.Namespace)
}

// defaultIdentity names this process: host, pid and a random suffix, so two
// runs on one machine (or two containers with pid 1) never share it.
func defaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
}
