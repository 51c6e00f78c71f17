package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The API server audits requests on Secrets only, at Metadata level (no
// bodies), and only at the RequestReceived stage: the event is written
// (blocking mode) before the request is served, so once a client has its
// answer the event is in the file. The log stays small and costs nothing at
// start-up.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [ResponseStarted, ResponseComplete, Panic]
rules:
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: None
`

// writeAuditPolicy writes the policy and returns the API server's audit
// flags, the log in <dir>/audit.log.
func writeAuditPolicy(dir string) ([]string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, fmt.Errorf("khook test cluster: cannot write the audit policy: %w", err)
	}
	return []string{
		"--audit-policy-file", policy,
		"--audit-log-path", filepath.Join(dir, "audit.log"),
		"--audit-log-format", "json",
		"--audit-log-mode", "blocking",
	}, nil
}

// AuditEvent is one audited request on a Secret.
type AuditEvent struct {
	Time       time.Time // when the API server received it
	Verb       string    // get, list, watch, create, update, patch, delete ...
	Resource   string    // "secrets"
	Namespace  string    // empty for a request across namespaces
	Name       string    // empty for a list or a watch of a collection
	User       string
	UserAgent  string
	RequestURI string // path and query, with the label selector
}

// ErrNoAuditLog: the cluster was not started by this process (Connect), so
// its audit log is not at hand.
var ErrNoAuditLog = errors.New("khook test cluster: no audit log (a connected cluster's API server is not this process's)")

// AuditEvents returns the audited requests on Secrets (see auditPolicy) for
// which keep returns true, oldest first.
func (c *Cluster) AuditEvents(keep func(AuditEvent) bool) ([]AuditEvent, error) {
	if c.Dir == "" {
		return nil, ErrNoAuditLog
	}
	path := filepath.Join(c.Dir, "audit.log")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("khook test cluster: cannot read the audit log: %w", err)
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var raw struct {
			Verb       string `json:"verb"`
			RequestURI string `json:"requestURI"`
			UserAgent  string `json:"userAgent"`
			User       struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				Resource  string `json:"resource"`
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"objectRef"`
			Received time.Time `json:"requestReceivedTimestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			// The last line may be half written by a request in flight.
			continue
		}
		ev := AuditEvent{Time: raw.Received, Verb: raw.Verb, User: raw.User.Username, UserAgent: raw.UserAgent, RequestURI: raw.RequestURI}
		if r := raw.ObjectRef; r != nil {
			ev.Resource, ev.Namespace, ev.Name = r.Resource, r.Namespace, r.Name
		}
		if keep == nil || keep(ev) {
			out = append(out, ev)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("khook test cluster: cannot read the audit log %s: %w", path, err)
	}
	return out, nil
}
