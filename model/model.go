// Package model is khook's results model: what a plan predicts and a run
// did, as values. It owns the typed actions (Action predicted, Did done),
// step outcomes and run statuses with their failure reasons, change sets,
// a failed step's diagnosis, the inventory of what khook created, warnings,
// the plan check, verdicts (Tone, Verdict, CommentStatus) and fleet legs,
// and the sentences that are part of the model (totals, change counts).
// The runner fills it; report renders it; nothing here writes output.
//
// May import: spec, redact, sops; no renderer (report) and no runner
// (layout_test.go).
package model

import (
	"strings"
	"time"

	"github.com/khook/khook/spec"
)

// Status is a step's state in a run.
type Status string

const (
	StatusPending Status = "pending"
	StatusRunning Status = "running"
	StatusOK      Status = "ok"
	StatusFailed  Status = "failed"
	StatusSkipped Status = "skipped"
)

// Run status values and failure reasons (the CI contract's failure-reason).
const (
	RunOK                    = "ok"
	RunFailed                = "failed"
	ReasonValidation         = "validation"
	ReasonStepFailed         = "step-failed"
	ReasonClusterUnreachable = "cluster-unreachable"
	ReasonStateLocked        = "state-locked"
	ReasonDrift              = "drift"
	ReasonCancelled          = "cancelled"
	// ReasonPlanChanged: apply --plan found the world no longer matches
	// the reviewed plan and wrote nothing.
	ReasonPlanChanged = "plan-changed"
)

// Results is the outcome of apply or destroy.
type Results struct {
	Name          string    `json:"name"`    // metadata.name
	Command       string    `json:"command"` // apply | destroy
	Status        string    `json:"status"`  // ok | failed
	FailureReason string    `json:"failureReason,omitempty"`
	Error         string    `json:"error,omitempty"` // run-level error (not a step's)
	Identifier    string    `json:"identifier,omitempty"`
	Server        string    `json:"server,omitempty"` // API server URL, credentials stripped
	StartedAt     time.Time `json:"startedAt"`
	DurationMs    int64     `json:"durationMs"`
	// Changes is whether any step changed the cluster (IsChange); written
	// from the steps (MarshalJSON), read with Changed.
	Changes bool         `json:"changes"`
	Steps   []StepResult `json:"steps"`
	// Inputs are the declared variables the run used (secrets masked).
	Inputs []Input `json:"inputs,omitempty"`
	// Selection is the run's step selection; nil when every step was
	// asked for.
	Selection *Selection `json:"selection,omitempty"`
	// PlanCheck is how the plan apply made first compared with the plan
	// reviewed on the pull request (khook ci plan-check); nil when unchecked.
	PlanCheck *PlanCheck `json:"planCheck,omitempty"`
}

// StepResult is one step's outcome.
type StepResult struct {
	Name       string    `json:"name"`
	Type       string    `json:"type"`
	Status     Status    `json:"status"`
	Attempts   int       `json:"attempts"`
	DurationMs int64     `json:"durationMs"`
	Error      string    `json:"error,omitempty"`
	SkipReason string    `json:"skipReason,omitempty"`
	Detail     string    `json:"detail,omitempty"`  // what the step did, one line
	LogTail    []string  `json:"logTail,omitempty"` // a failed job's last pod log lines
	Changes    []Change  `json:"changes,omitempty"` // what the step did, per object
	Needs      []string  `json:"needs,omitempty"`
	Skip       spec.Skip `json:"skip,omitempty"` // why it did not run (skip.go)
	Pos        spec.Pos  `json:"pos"`

	// Diagnosis is what a failed step was waiting on and why it is stuck
	// (diagnosis.go); nil when the step did not fail waiting.
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`

	// Warnings are the API server's warnings to the step's requests and
	// khook's own about the step.
	Warnings []Warning `json:"warnings,omitempty"`

	// Chart is the chart a helm step installed, upgraded to or found
	// installed (nil for other steps and when it failed).
	Chart *ChartFetched `json:"chart,omitempty"`

	// Inventory is what the step put in the cluster, for the state record
	// (pruning, #22); never rendered.
	Inventory *Inventory `json:"-"`
}

// Warning is one warning about a step, masked: the API server's to a
// request (deprecated API version, deprecated node label ...) or khook's
// own (a kept CRD or PVC, a policy warn rule, ...). From says whose.
type Warning struct {
	From    Warner `json:"from"`
	Object  string `json:"object,omitempty"` // "Deployment shop/web"
	Message string `json:"message"`
}

// Warner is whose a warning is. Only the API server's warnings are
// failures under --warnings-as-errors (as kubectl's flag).
type Warner string

const (
	// WarnerAPIServer: a Warning header the API server sent with a response.
	WarnerAPIServer Warner = "api-server"
	// WarnerKhook: khook's own word about what it does or keeps.
	WarnerKhook Warner = "khook"
)

// String is "Deployment shop/web: <message>".
func (w Warning) String() string {
	if w.Object == "" {
		return w.Message
	}
	return w.Object + ": " + w.Message
}

// Plan is what plan predicts, per step.
type Plan struct {
	Name       string         `json:"name"`
	Identifier string         `json:"identifier,omitempty"`
	Server     string         `json:"server,omitempty"`
	Offline    bool           `json:"offline"`
	Changes    bool           `json:"changes"` // any step would change the cluster
	Totals     map[Action]int `json:"totals"`  // predicted action -> step count
	Steps      []PlanStep     `json:"steps"`
	// Inputs are the declared variables the plan used (secrets masked).
	Inputs []Input `json:"inputs,omitempty"`
	// Notes are what the plan says once, beside the steps ("pruning needs
	// a state record").
	Notes []string `json:"notes,omitempty"`
	// Selection is the plan's step selection (a saved plan's is the one
	// apply --plan runs); nil when every step was planned.
	Selection *Selection `json:"selection,omitempty"`
	// Fingerprint is the hex SHA-256 of everything the plan was decided
	// from and decided (spec and input digests, the cluster's identity, per
	// step its action and object digests): two plans of an unchanged world
	// have the same one. Empty offline.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Digests are what the fingerprint covers besides the steps (digest.go);
	// nil offline.
	Digests *PlanDigests `json:"digests,omitempty"`
	// PolicyFiles are the --policy files in force; PolicyNotes say what
	// of them a plan could not honour (offline: namespaceObject ...).
	PolicyFiles []string `json:"policyFiles,omitempty"`
	PolicyNotes []string `json:"policyNotes,omitempty"`
}

// ShortFingerprint is the fingerprint as people see it: its first 12 hex
// digits ("" when there is none).
func ShortFingerprint(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return fp
}

// PlanStep is one step's prediction.
type PlanStep struct {
	Name     string       `json:"name"`
	Type     string       `json:"type"`
	Action   Action       `json:"action"`
	Reason   string       `json:"reason,omitempty"` // why (unknown, skip, excluded, fail)
	Summary  string       `json:"summary"`          // one line: what the step does
	Needs    []string     `json:"needs,omitempty"`  // what it starts after
	When     string       `json:"when,omitempty"`   // the condition, when present
	Skip     spec.Skip    `json:"skip,omitempty"`   // why it is left out (skip.go)
	Objects  []ObjectPlan `json:"objects,omitempty"`
	Diff     string       `json:"diff,omitempty"`     // unified diff (plan --diff)
	DiffNote string       `json:"diffNote,omitempty"` // "no changes", "unavailable (<reason>)"
	Pos      spec.Pos     `json:"pos"`
	// Release is what a helm step's prediction was made against.
	Release *ReleaseDigest `json:"release,omitempty"`
	// ChartMoved: the chart's version is the one last applied, its bytes
	// are not (a drift finding whatever the action; nil: none).
	ChartMoved *ChartMoved `json:"chartMoved,omitempty"`
	// Warnings are the API server's warnings to the plan's dry runs of
	// the step and khook's own about it (not part of the fingerprint).
	Warnings []Warning `json:"warnings,omitempty"`
	// DriftWarn is the step's drift: warn: its changes are reported as
	// drift but do not fail a drift run (Plan.DriftFails).
	DriftWarn bool `json:"driftWarn,omitempty"`
	// Policy are the policy rules the step's changes break (policy.go).
	Policy []Violation `json:"policy,omitempty"`
	// AuditAnnotations are the admission policies' auditAnnotations for
	// the step's objects (the API server's audit log; no verdict).
	AuditAnnotations []AuditAnnotation `json:"auditAnnotations,omitempty"`
}

// ObjectPlan is one object a step would touch: "create ConfigMap demo/settings".
type ObjectPlan struct {
	Action    Action `json:"action"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Reason says why: what a prune deletes, or keeps.
	Reason string `json:"reason,omitempty"`
	// With is what a deleted CRD takes with it ("its 2 Widget objects in
	// 1 namespace"): the plan's verdict and annotations say it.
	With string `json:"with,omitempty"`
	// Desired and Live are digests (digest.go) of the object as it would be
	// sent and as it was read when the action was predicted ("" for none).
	Desired string `json:"desired,omitempty"`
	Live    string `json:"live,omitempty"`
}

// EventKind says what happened to a step.
type EventKind string

const (
	EventStarted  EventKind = "started"  // an attempt began
	EventRetrying EventKind = "retrying" // an attempt failed; another follows after retryDelay
	EventFinished EventKind = "finished" // the step reached ok, failed or skipped
	EventMessage  EventKind = "message"  // progress worth a log line
)

// Event is what the engine emits; it never prints. Renderers turn events into
// live terminal lines or log lines.
type Event struct {
	Time    time.Time   `json:"time"`
	Kind    EventKind   `json:"kind"`
	Step    string      `json:"step"`
	Attempt int         `json:"attempt,omitempty"`
	Message string      `json:"message,omitempty"`
	Result  *StepResult `json:"result,omitempty"` // set on EventFinished
}

// LogTailNotInError returns the pod log lines a renderer should print after
// the error: none when the error text already quotes them all (the job
// executor's errors do), so no output shows the same lines twice.
func (s StepResult) LogTailNotInError() []string {
	for _, line := range s.LogTail {
		if !strings.Contains(s.Error, line) {
			return s.LogTail
		}
	}
	return nil
}
