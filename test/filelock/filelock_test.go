package filelock

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// announcer closes said on its first write.
type announcer struct {
	said chan struct{}
	once sync.Once
}

func (a *announcer) Write(p []byte) (int, error) {
	a.once.Do(func() { close(a.said) })
	return len(p), nil
}

// A second builder waits for the first one's lock (flock locks belong to
// open files, so two opens in one process contend like two processes).
func TestBuildLockSerializes(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlockFirst, err := Lock(t.Context(), path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	waiting := &announcer{said: make(chan struct{})}
	acquired := make(chan func(), 1)
	go func() {
		unlock, err := Lock(t.Context(), path, waiting)
		if err != nil {
			t.Error(err)
			close(acquired)
			return
		}
		acquired <- unlock
	}()
	// The waiter says it waits before blocking; only then release.
	select {
	case <-waiting.said:
	case <-acquired:
		t.Fatal("second lock acquired while the first was held")
	case <-time.After(10 * time.Second):
		t.Fatal("second locker neither waited nor acquired within 10s")
	}
	unlockFirst()
	select {
	case unlock := <-acquired:
		if unlock != nil {
			unlock()
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second lock not acquired 10s after the first was released")
	}
}

// Giving up on the lock returns the context's error instead of hanging.
func TestBuildLockHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := Lock(t.Context(), path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, io.Discard); err == nil || !strings.Contains(err.Error(), "gave up waiting") {
		t.Fatalf("Lock with an expiring context: %v, want a gave-up error", err)
	}
}
