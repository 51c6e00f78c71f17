package cosign

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
)

// Cache remembers verdicts for one run, so a chart that several steps (or
// plan and apply's re-plan) use is verified once. The key is the
// repository, the manifest digest and the policy: signatures hang off a
// repository, and another policy may judge the same signatures otherwise.
// Verified signers and *Unverified errors are kept; registry errors are
// not, so a later call retries. The zero Cache is ready; it is safe for
// concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	once   sync.Once
	signer string
	err    error
}

// Verify is Verify through the cache.
func (c *Cache) Verify(ctx context.Context, t Target, manifestDigest string, p Policy) (string, error) {
	k := cacheKey(t, manifestDigest, p)
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	e := c.entries[k]
	if e == nil {
		e = &cacheEntry{}
		c.entries[k] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.signer, e.err = Verify(ctx, t, manifestDigest, p) })
	var unverified *Unverified
	if e.err != nil && !errors.As(e.err, &unverified) {
		c.mu.Lock()
		if c.entries[k] == e {
			delete(c.entries, k) // not a verdict: the next call asks again
		}
		c.mu.Unlock()
	}
	return e.signer, e.err
}

// cacheKey hashes everything a verdict depends on.
func cacheKey(t Target, manifestDigest string, p Policy) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%d\x00", t.Host, t.Repository, manifestDigest, p.Issuer, p.Subject, len(p.Keys))
	fmt.Fprintf(h, "%s\x00", p.SubjectRegExp)
	for _, k := range p.Keys {
		fmt.Fprintf(h, "%d\x00%s", len(k), k)
	}
	fmt.Fprintf(h, "%d\x00%s", len(p.TrustedRoot), p.TrustedRoot)
	return string(h.Sum(nil))
}
