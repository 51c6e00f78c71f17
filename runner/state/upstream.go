package state

import (
	"encoding/json"
	"fmt"
	"time"
)

// UpstreamAPIVersion marks the record upstream khook (github.com/dvrkn/khook,
// internal/state) writes into the same Secret key: a JSON document with this
// apiVersion and its steps as a list in spec order, each with the step's
// inputHash. khook reads it and replaces it with its own record on the
// run's first write (Session.Converted says so).
const UpstreamAPIVersion = "khook.io/state.v1"

// upstreamHashPrefix marks a step hash carried over from an upstream
// record. Upstream hashes a step's inputs in its own form, which khook
// cannot reproduce: such a hash never matches, so each step runs once more
// (and converges) before it resumes.
const upstreamHashPrefix = "upstream:"

// upstreamRecord is upstream's record, field for field.
type upstreamRecord struct {
	APIVersion   string         `json:"apiVersion"`
	SpecName     string         `json:"specName"`
	SpecHash     string         `json:"specHash"`
	KhookVersion string         `json:"khookVersion"`
	RunStatus    string         `json:"runStatus"` // running | ok | failed
	StartedAt    time.Time      `json:"startedAt"`
	UpdatedAt    time.Time      `json:"updatedAt"`
	Steps        []upstreamStep `json:"steps"`
}

type upstreamStep struct {
	Name       string    `json:"name"`
	Type       string    `json:"type"`
	InputHash  string    `json:"inputHash,omitempty"`
	Status     string    `json:"status,omitempty"` // ok | failed | skipped
	Attempts   int       `json:"attempts,omitempty"`
	DurationMs int64     `json:"durationMs,omitempty"`
	Error      string    `json:"error,omitempty"`
	SkipReason string    `json:"skipReason,omitempty"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}

// fromUpstream converts raw when it is an upstream record; ok is false for
// anything else (khook's own record has no apiVersion).
func fromUpstream(raw []byte) (rec *Record, ok bool, err error) {
	var probe struct {
		APIVersion string `json:"apiVersion"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.APIVersion != UpstreamAPIVersion {
		return nil, false, nil
	}
	var up upstreamRecord
	if err := json.Unmarshal(raw, &up); err != nil {
		return nil, true, fmt.Errorf("it is marked %s (upstream khook) but does not read as one: %v", UpstreamAPIVersion, err)
	}
	rec = &Record{SpecName: up.SpecName, SpecHash: upstreamHashPrefix + up.SpecHash, KhookVersion: up.KhookVersion,
		RunStatus: upstreamRunStatus(up.RunStatus), StartedAt: up.StartedAt, UpdatedAt: up.UpdatedAt,
		Steps: make(map[string]StepRecord, len(up.Steps))}
	for _, s := range up.Steps {
		e := StepRecord{Status: StepSkipped, Error: truncate(s.Error), SkipReason: truncate(s.SkipReason), FinishedAt: s.FinishedAt}
		switch s.Status {
		case "ok":
			e.Status = StepOK
		case "failed":
			e.Status = StepFailed
		}
		if s.InputHash != "" {
			e.Hash = upstreamHashPrefix + s.InputHash
		}
		rec.Steps[s.Name] = e
	}
	return rec, true, nil
}

func upstreamRunStatus(s string) string {
	switch s {
	case "ok":
		return RunSucceeded
	case "failed":
		return RunFailed
	}
	return RunRunning
}

// convertedNote is what a run says, once, about an upstream record.
func convertedNote(ref Ref, prev *Record) string {
	return fmt.Sprintf("the %s was written by upstream khook (%s, khook %s): this run converts it to khook's record; its %d recorded steps run once more, since upstream's input hashes are not khook's, and resume from the next run on",
		ref.describe(), UpstreamAPIVersion, prev.KhookVersion, len(prev.Steps))
}
