package awaitline

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestAwaitReturnsTheLineOnceItIsComplete(t *testing.T) {
	var o Output
	got := make(chan string, 1)
	go func() {
		line, err := o.Await(context.Background(), "step w:", "being deleted")
		if err != nil {
			t.Error(err)
		}
		got <- line
	}()
	o.Write([]byte("12:00:00 step w: running\n12:00:01 step w: waiting: configmap/held is being"))
	select {
	case line := <-got:
		t.Fatalf("a partial line matched: %q", line)
	default:
	}
	o.Write([]byte(" deleted\nmore\n"))
	if line := <-got; line != "12:00:01 step w: waiting: configmap/held is being deleted" {
		t.Errorf("Await = %q", line)
	}
}

func TestAwaitFailsWhenTheProcessEndsWithoutTheLine(t *testing.T) {
	var o Output
	o.Write([]byte("12:00:00 step w: running\n"))
	done := make(chan error, 1)
	go func() { _, err := o.Await(context.Background(), "waiting"); done <- err }()
	o.Close()
	if err := <-done; err == nil || !strings.Contains(err.Error(), `the process ended without printing a line with ["waiting"]`) {
		t.Errorf("Await after Close: %v", err)
	}
}

func TestAwaitFailsAtItsDeadline(t *testing.T) {
	var o Output
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := o.Await(ctx, "never"); err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("Await past its deadline: %v", err)
	}
}
