package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/khook/khook/words"
)

// LegKind marks a fleet leg's results file.
const LegKind = "khook.io/fleet-leg/v1"

// Leg is one cluster's run in a fleet (a CI matrix job): what it planned
// or did, and how it ended. Each leg writes one file (LegFileName) that
// the fleet report reads back.
type Leg struct {
	Kind          string `json:"kind"`
	Fleet         string `json:"fleet"`
	Cluster       string `json:"cluster"`
	Wave          int    `json:"wave"`
	Command       string `json:"command"` // plan | apply | drift | destroy
	Status        string `json:"status"`  // ok | failed
	FailureReason string `json:"failureReason,omitempty"`
	Error         string `json:"error,omitempty"`
	Changes       bool   `json:"changes"`
	Drift         bool   `json:"drift,omitempty"`
	Fingerprint   string `json:"fingerprint,omitempty"`
	// SummaryURL links the leg's job (its summary has the whole report).
	SummaryURL string   `json:"summaryUrl,omitempty"`
	Plan       *Plan    `json:"plan,omitempty"`
	Results    *Results `json:"results,omitempty"`
}

// LegFileName is a leg's results file name: unique per cluster, so the
// legs' artifacts can be downloaded into one directory.
func LegFileName(cluster string) string { return "khook-leg-" + cluster + ".json" }

// ReadLeg decodes one leg results file.
func ReadLeg(r io.Reader) (*Leg, error) {
	var l Leg
	dec := json.NewDecoder(r)
	if err := dec.Decode(&l); err != nil {
		return nil, err
	}
	if l.Kind != LegKind {
		return nil, fmt.Errorf("it is not a fleet leg's results file (kind %q, want %q)", l.Kind, LegKind)
	}
	if l.Cluster == "" {
		return nil, fmt.Errorf("it names no cluster")
	}
	return &l, nil
}

// Fleet outcomes of one cluster, as its row shows them.
const (
	FleetChanges   = "changes"
	FleetNoChanges = "no-changes"
	FleetFailed    = "failed"
	FleetDrift     = "drift"
	// FleetMissing: a cluster of the selection with no results file. It
	// counts as failed: a leg that never ran is not a green leg.
	FleetMissing = "missing"
)

// FleetMember is one cluster of the fleet's selection.
type FleetMember struct {
	Name string
	Wave int
}

// FleetReport is the fleet's one report, built from its legs.
type FleetReport struct {
	Fleet       string      `json:"fleet"`
	Command     string      `json:"command"`
	Wave        int         `json:"wave,omitempty"` // the wave reported; 0 every wave
	Status      string      `json:"status"`         // ok | failed
	Totals      FleetTotals `json:"totals"`
	MaxFailures int         `json:"maxFailures"`
	// Halted: the wave's failed clusters exceed maxFailures (--wave).
	Halted   bool         `json:"halted,omitempty"`
	Clusters []FleetRow   `json:"clusters"`
	Groups   []FleetGroup `json:"groups,omitempty"`
	// Ignored are results files of clusters outside the selection.
	Ignored []string `json:"ignored,omitempty"`
}

// FleetTotals count clusters by outcome; Failed includes Missing.
type FleetTotals struct {
	Clusters  int `json:"clusters"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	Drifted   int `json:"drifted"`
	Failed    int `json:"failed"`
	Missing   int `json:"missing"`
}

// FleetRow is one cluster's row.
type FleetRow struct {
	Cluster       string `json:"cluster"`
	Wave          int    `json:"wave"`
	Outcome       string `json:"outcome"`
	Changes       int    `json:"changes"`           // steps that change the cluster
	Summary       string `json:"summary,omitempty"` // the totals line
	FailureReason string `json:"failureReason,omitempty"`
	Error         string `json:"error,omitempty"`
	Group         int    `json:"group"` // index into Groups; -1 none
	SummaryURL    string `json:"summaryUrl,omitempty"`
	Leg           *Leg   `json:"-"` // the leg file the row was read from
}

// FleetGroup is clusters whose plans (or results) are identical: one
// entry, one diff.
type FleetGroup struct {
	Clusters []string `json:"clusters"`
	Changes  int      `json:"changes"`
	Outcome  string   `json:"outcome"`
	// Plan is the plan they share (the first cluster's); Results for an apply.
	Plan    *Plan    `json:"plan,omitempty"`
	Results *Results `json:"results,omitempty"`
	key     string
}

// BuildFleetReport puts the legs of a selection into one report: a row per
// member (a member without a leg is missing, so failed), identical plans
// grouped, and the wave gate (failed clusters above maxFailures halt).
func BuildFleetReport(fleet, command string, wave, maxFailures int, members []FleetMember, legs []*Leg) *FleetReport {
	byName := make(map[string]*Leg, len(legs))
	inSel := make(map[string]bool, len(members))
	for _, m := range members {
		inSel[m.Name] = true
	}
	rep := &FleetReport{Fleet: fleet, Command: command, Wave: wave, MaxFailures: maxFailures, Status: RunOK}
	for _, l := range legs {
		if !inSel[l.Cluster] {
			rep.Ignored = append(rep.Ignored, l.Cluster)
			continue
		}
		if _, dup := byName[l.Cluster]; !dup {
			byName[l.Cluster] = l
		}
		if rep.Command == "" {
			rep.Command = l.Command
		}
	}
	sort.Strings(rep.Ignored)
	groupOf := map[string]int{}
	for _, m := range members {
		row := FleetRow{Cluster: m.Name, Wave: m.Wave, Group: -1}
		l := byName[m.Name]
		row.Leg = l
		rep.Totals.Clusters++
		switch {
		case l == nil:
			row.Outcome = FleetMissing
			row.Error = "no results file: the leg never ran, or its results were not uploaded"
			rep.Totals.Failed++
			rep.Totals.Missing++
		default:
			row.SummaryURL = l.SummaryURL
			row.FailureReason, row.Error = l.FailureReason, l.Error
			row.Changes, row.Summary = legChanges(l)
			switch {
			case l.Drift:
				row.Outcome = FleetDrift
				rep.Totals.Drifted++
			case l.Status != RunOK:
				row.Outcome = FleetFailed
				rep.Totals.Failed++
			case l.Changes:
				row.Outcome = FleetChanges
				rep.Totals.Changed++
			default:
				row.Outcome = FleetNoChanges
				rep.Totals.Unchanged++
			}
			if row.Outcome == FleetChanges || row.Outcome == FleetDrift {
				k := row.Outcome + "/" + legKey(l)
				g, ok := groupOf[k]
				if !ok {
					g = len(rep.Groups)
					groupOf[k] = g
					rep.Groups = append(rep.Groups, FleetGroup{Changes: row.Changes, Outcome: row.Outcome, Plan: l.Plan, Results: l.Results, key: k})
				}
				rep.Groups[g].Clusters = append(rep.Groups[g].Clusters, m.Name)
				row.Group = g
			}
		}
		rep.Clusters = append(rep.Clusters, row)
	}
	if rep.Totals.Failed > 0 || rep.Totals.Drifted > 0 {
		rep.Status = RunFailed
	}
	if wave > 0 && rep.Totals.Failed > maxFailures {
		rep.Halted = true
	}
	return rep
}

// Failed: the report fails the command that prints it: with a wave, only
// when the wave halts (its failures exceed maxFailures, so the next wave's
// job does not start); for every wave, when any cluster failed or drifted.
func (r *FleetReport) Failed() bool {
	return r.Halted || (r.Wave == 0 && r.Status != RunOK)
}

// FailureReason is the fleet's failure reason: step-failed when a cluster
// failed (or its leg is missing), drift when clusters only drifted, "" when
// it is ok.
func (r *FleetReport) FailureReason() string {
	switch {
	case r.Totals.Failed > 0:
		return ReasonStepFailed
	case r.Totals.Drifted > 0:
		return ReasonDrift
	}
	return ""
}

// legChanges counts the steps that change the cluster and words the totals.
func legChanges(l *Leg) (int, string) {
	n := 0
	switch {
	case l.Plan != nil:
		for _, s := range l.Plan.Steps {
			if IsChange(s.Action) {
				n++
			}
		}
		return n, TotalsLine(l.Plan)
	case l.Results != nil:
		for _, s := range l.Results.Steps {
			if s.Changed() {
				n++
			}
		}
		return n, ChangesSentence(l.Results)
	}
	return 0, ""
}

// legKey identifies what a leg would do, leaving out what differs between
// clusters that would do the same (their identity, live digests, timings):
// per step its action and reason, the objects with their desired digests,
// and the diff; for results, per step its status and changes.
func legKey(l *Leg) string {
	h := sha256.New()
	w := func(parts ...string) {
		for _, p := range parts {
			io.WriteString(h, p)
			h.Write([]byte{0})
		}
		h.Write([]byte{1})
	}
	if p := l.Plan; p != nil {
		for _, s := range p.Steps {
			w("step", s.Name, s.Type, string(s.Action), s.Reason, s.Diff, s.DiffNote)
			for _, o := range s.Objects {
				w("obj", string(o.Action), o.Kind, o.Namespace, o.Name, o.Desired)
			}
		}
	}
	if r := l.Results; r != nil {
		for _, s := range r.Steps {
			w("result", s.Name, s.Type, string(s.Status))
			for _, c := range s.Changes {
				w("change", string(c.Action), c.Kind, c.Namespace, c.Name)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Verdict is the fleet's one-line verdict.
func (r *FleetReport) Verdict() Verdict {
	t := r.Totals
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	changed := "with changes"
	if r.Command == "apply" || r.Command == "destroy" {
		changed = "changed"
	}
	add(t.Changed, changed)
	add(t.Unchanged, "without changes")
	add(t.Drifted, "drifted")
	add(t.Failed-t.Missing, "failed")
	add(t.Missing, "without results (failed)")
	text := fmt.Sprintf("%d %s", t.Clusters, words.Plural(t.Clusters, "cluster", "clusters"))
	if r.Wave > 0 {
		text = fmt.Sprintf("Wave %d: %s", r.Wave, text)
	}
	if len(parts) > 0 {
		text += ": " + strings.Join(parts, ", ")
	}
	text += "."
	if r.Halted {
		text += fmt.Sprintf(" The rollout halts: %d failed, more than maxFailures %d.", t.Failed, r.MaxFailures)
	}
	tone := ToneOK
	switch {
	case t.Failed > 0:
		tone = ToneFailed
	case t.Drifted > 0:
		tone = ToneWarning
	case t.Changed > 0:
		tone = ToneNote
	}
	return Verdict{Tone: tone, Text: text}
}

// GroupTitle is a group's heading: "prod-eu, prod-us: the same 3 changes".
func (g FleetGroup) Title() string {
	names := strings.Join(g.Clusters, ", ")
	what := fmt.Sprintf("%d %s", g.Changes, words.Plural(g.Changes, "change", "changes"))
	if g.Outcome == FleetDrift {
		what = fmt.Sprintf("drift in %d %s", g.Changes, words.Plural(g.Changes, "step", "steps"))
	}
	if len(g.Clusters) > 1 {
		return names + ": the same " + what
	}
	return names + ": " + what
}

// OutcomeText words a row's outcome.
func (row FleetRow) OutcomeText() string {
	switch row.Outcome {
	case FleetChanges:
		return fmt.Sprintf("%d %s", row.Changes, words.Plural(row.Changes, "change", "changes"))
	case FleetNoChanges:
		return "no changes"
	case FleetDrift:
		return "drift"
	case FleetMissing:
		return "failed (no results)"
	}
	if row.FailureReason != "" {
		return "failed (" + row.FailureReason + ")"
	}
	return "failed"
}

func (row FleetRow) Tone() Tone {
	switch row.Outcome {
	case FleetChanges:
		return ToneNote
	case FleetNoChanges:
		return ToneOK
	case FleetDrift:
		return ToneWarning
	}
	return ToneFailed
}

// Failed reports whether the row counts as a failure.
func (row FleetRow) Failed() bool { return row.Outcome == FleetFailed || row.Outcome == FleetMissing }

// FleetCommentStatus is the fleet comment's status word.
func FleetCommentStatus(rep *FleetReport) CommentStatus {
	switch {
	case rep.Totals.Failed > 0:
		return CommentFailed
	case rep.Totals.Drifted > 0:
		return CommentDrift
	case rep.Command == "drift":
		return CommentNoDrift
	case rep.Command == "apply":
		return CommentApplied
	case rep.Command == "destroy":
		return CommentDestroyed
	}
	return CommentPlanned
}
