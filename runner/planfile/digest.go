package planfile

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/khook/khook/redact"
)

// KeyEnv is the environment variable the CLI reads the plan key from.
const KeyEnv = "KHOOK_PLAN_KEY"

// Hasher makes the digests a plan records. With a key (KHOOK_PLAN_KEY, a
// random string kept as a CI secret and set for both plan and apply) every
// digest is an HMAC-SHA256 keyed with it: a plan file then lets nobody test
// guesses of a secret against its digests, however short the secret.
// Without a key the digests are plain SHA-256 over the data with every
// registered secret masked first, so they still never depend on a secret
// value (and so cannot tell a changed secret either); secret inputs then get
// no digest at all. A key derived from anything in the file or the spec
// (the spec digest, the cluster UID, the secret set itself) would be as
// guessable as the secret it protects, so khook takes none.
type Hasher struct {
	key  []byte
	mask *redact.Redactor
}

// NewHasher returns a hasher keyed with key (none when empty); r masks
// secrets in unkeyed digests.
func NewHasher(key []byte, r *redact.Redactor) *Hasher {
	if r == nil {
		r = redact.New()
	}
	return &Hasher{key: key, mask: r}
}

// Keyed reports whether digests are HMACs with the plan key.
func (h *Hasher) Keyed() bool { return h != nil && len(h.key) > 0 }

// Sum digests data in a domain (what it is: "spec", "object", ...), so
// equal bytes of different meaning never share a digest.
func (h *Hasher) Sum(domain string, data []byte) string {
	if h.Keyed() {
		m := hmac.New(sha256.New, h.key)
		m.Write([]byte(domain + "\x00"))
		m.Write(data)
		return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
	}
	d := sha256.New()
	d.Write([]byte(domain + "\x00"))
	d.Write([]byte(h.mask.String(string(data))))
	return "sha256:" + hex.EncodeToString(d.Sum(nil))
}

// JSON digests v's JSON encoding (maps encode with sorted keys, so equal
// values give equal digests); "" when v cannot be encoded.
func (h *Hasher) JSON(domain string, v any) string {
	if v == nil {
		return ""
	}
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return h.Sum(domain, data)
}

// Object digests an object. The planner normalises it first (the change
// decision's objdiff.Normalize: without status and the server's bookkeeping),
// so this package needs no Kubernetes types.
func (h *Hasher) Object(obj map[string]any) string { return h.JSON("object", obj) }

// KeyCheck is a keyed digest of a constant: apply compares it to tell
// "another key" from "another world". "" without a key.
func (h *Hasher) KeyCheck() string {
	if !h.Keyed() {
		return ""
	}
	return h.Sum("key-check", []byte("khook.io/plan"))
}

// Input digests one declared input; a secret gets none without a key.
func (h *Hasher) Input(name, value string, secret bool) string {
	if secret && !h.Keyed() {
		return ""
	}
	return h.Sum("input", []byte(name+"\x00"+value))
}
