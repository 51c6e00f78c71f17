package apiproxy

import (
	"io"
	"net/http"
	"strings"
)

// holdRule stalls the requests it matches: the first Times of them, or all
// of them when Times is 0.
type holdRule struct {
	method, pathPart string
	times, seen      int
}

// Hold makes the proxy hold matching requests (method, and a path that
// contains pathPart) open until their client gives up, without passing them
// on: the API server never sees them. times > 0 holds only the first times
// matches and passes the rest through; times == 0 holds every one. It lets a
// test provoke a client-side time-out deterministically, with no sleeps.
func (p *Proxy) Hold(method, pathPart string, times int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds = append(p.holds, &holdRule{method: method, pathPart: pathPart, times: times})
}

// Held returns the requests held so far ("PATCH /api/v1/...") and forgets them.
func (p *Proxy) Held() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	held := p.held
	p.held = nil
	return held
}

// hold blocks until the client abandons r when a rule matches it, and
// reports whether it did.
func (p *Proxy) hold(r *http.Request) bool {
	if !p.matchHold(r) {
		return false
	}
	// The server notices a client hanging up (and cancels the context)
	// only once the request body has been read.
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done() // the client's time-out or cancellation
	return true
}

func (p *Proxy) matchHold(r *http.Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.holds {
		if r.Method != h.method || !strings.Contains(r.URL.Path, h.pathPart) {
			continue
		}
		if h.times > 0 && h.seen >= h.times {
			continue
		}
		h.seen++
		p.held = append(p.held, r.Method+" "+r.URL.Path)
		return true
	}
	return false
}
