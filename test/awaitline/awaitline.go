// Package awaitline lets a test act once a running process says it reached
// a state, on the line that says so: khook's progress lines name what a
// step is waiting for ("step w: waiting: ... configmap/held ... is being
// deleted"), which a request seen by a proxy or the mere start of a step
// does not prove.
package awaitline

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
)

// Output collects what a process writes (use it as its Stdout or Stderr)
// and may be read while the process runs.
type Output struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	closed  bool
	changed chan struct{} // closed, and replaced, on every write and on Close
}

// Write appends p; it is safe against concurrent reads.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.buf.Write(p)
	o.wake()
	return n, err
}

// Close says the process has ended (its Wait has returned): an Await still
// pending then fails at once instead of at its deadline.
func (o *Output) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.wake()
}

func (o *Output) wake() {
	if o.changed != nil {
		close(o.changed)
		o.changed = nil
	}
}

// String is everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Bytes is a copy of everything written so far.
func (o *Output) Bytes() []byte {
	return []byte(o.String())
}

// Await returns the first complete line that contains every one of parts,
// as soon as it is written. It fails when ctx ends first or when the
// output was closed without such a line, naming the parts.
func (o *Output) Await(ctx context.Context, parts ...string) (string, error) {
	for {
		o.mu.Lock()
		line, found := match(o.buf.String(), parts)
		closed := o.closed
		if o.changed == nil {
			o.changed = make(chan struct{})
		}
		changed := o.changed
		o.mu.Unlock()
		switch {
		case found:
			return line, nil
		case closed:
			return "", fmt.Errorf("the process ended without printing a line with %q", parts)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", fmt.Errorf("no line with %q printed: %w", parts, ctx.Err())
		}
	}
}

// match finds the first complete line of s holding every part.
func match(s string, parts []string) (string, bool) {
	complete, _ := cutLast(s)
	for line := range strings.Lines(complete) {
		line = strings.TrimSuffix(line, "\n")
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok {
			return line, true
		}
	}
	return "", false
}

// cutLast splits s after its last newline: the complete lines, and a line
// still being written.
func cutLast(s string) (complete, partial string) {
	i := strings.LastIndexByte(s, '\n')
	return s[:i+1], s[i+1:]
}
