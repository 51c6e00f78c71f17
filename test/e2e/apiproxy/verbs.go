package apiproxy

import (
	"net/http"
	"strings"
)

// Counts are the requests a proxy forwarded, by verb: GET (one object, a
// subresource or discovery), LIST, WATCH, POST, PUT, PATCH, DELETE.
// Discovery (/api, /apis/..., /openapi/..., /version) counts as GET and
// again in Discovery; server-side dry runs count under their verb and again
// in DryRuns.
type Counts struct {
	Verbs     map[string]int
	Discovery int
	DryRuns   int
	// Requests are the requests themselves, in the order they arrived:
	// "LIST /api/v1/namespaces/a/secrets?labelSelector=...", so a count
	// that moved can be read request by request.
	Requests []string
}

// Total is the number of requests.
func (c Counts) Total() int {
	n := 0
	for _, v := range c.Verbs {
		n += v
	}
	return n
}

// Writes is the number of POST, PUT, PATCH and DELETE requests that were
// not dry runs: what changed (or tried to change) the cluster.
func (c Counts) Writes() int {
	return c.Verbs[http.MethodPost] + c.Verbs[http.MethodPut] + c.Verbs[http.MethodPatch] + c.Verbs[http.MethodDelete] - c.DryRuns
}

// Requests returns the requests counted since the last call and forgets them.
func (p *Proxy) Requests() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts
	p.counts = Counts{}
	if c.Verbs == nil {
		c.Verbs = map[string]int{}
	}
	return c
}

func (p *Proxy) count(r *http.Request) {
	verb, discovery := Verb(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts.Verbs == nil {
		p.counts.Verbs = map[string]int{}
	}
	p.counts.Verbs[verb]++
	p.counts.Requests = append(p.counts.Requests, verb+" "+r.URL.RequestURI())
	if discovery {
		p.counts.Discovery++
	}
	if IsWrite(r) && strings.Contains(r.URL.RawQuery, "dryRun=All") {
		p.counts.DryRuns++
	}
}

// Verb names a request as the API server's audit log would (upper case,
// "GET" for get): a GET is WATCH with watch=true, LIST on a collection path,
// GET on an object or subresource. discovery says the path is not a
// resource at all (/api, /apis/apps/v1, /openapi/v3, /version).
func Verb(r *http.Request) (verb string, discovery bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return r.Method, false
	}
	if w := r.URL.Query().Get("watch"); w == "true" || w == "1" {
		return "WATCH", false
	}
	seg := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var rest []string
	switch {
	case seg[0] == "api" && len(seg) > 2:
		rest = seg[2:]
	case seg[0] == "apis" && len(seg) > 3:
		rest = seg[3:]
	default:
		return http.MethodGet, true
	}
	if rest[0] == "watch" {
		return "WATCH", false
	}
	if rest[0] == "namespaces" && len(rest) > 2 {
		rest = rest[2:] // a namespaced resource
	}
	if len(rest) == 1 {
		return "LIST", false
	}
	return http.MethodGet, false
}
