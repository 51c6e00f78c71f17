package model

import (
	"fmt"
	"sort"
	"strings"
)

// actionOrder is the order of the closing totals line, changes first.
var actionOrder = []Action{
	ActionFail, ActionInstall, ActionUpgrade, ActionCreate, ActionConfigure, ActionReplace, ActionDelete, ActionUninstall,
	ActionRestart, ActionRun, ActionWait, ActionKeep, ActionUnchanged, ActionNoop, ActionSkip,
	ActionUnknown, ActionPlanned, ActionExcluded,
}

// actionPhrase is how the totals line names an action's count.
var actionPhrase = map[Action]string{
	ActionInstall:   "to install",
	ActionUpgrade:   "to upgrade",
	ActionCreate:    "to create",
	ActionConfigure: "to configure",
	ActionDelete:    "to delete",
	ActionReplace:   "to replace",
	ActionUninstall: "to uninstall",
	ActionRestart:   "to restart",
	ActionRun:       "to run",
	ActionWait:      "to wait",
	ActionSkip:      "to skip",
	ActionKeep:      "to keep",
	ActionFail:      "would fail",
}

// Drifted reports whether the step no longer matches what was applied:
// it would change the cluster, or its chart's bytes moved (ChartMoved).
func (s PlanStep) Drifted() bool { return IsChange(s.Action) || s.ChartMoved != nil }

// Drifted reports whether a drift run of the plan finds drift in any step.
func (p *Plan) Drifted() bool {
	for _, s := range p.Steps {
		if s.Drifted() {
			return true
		}
	}
	return false
}

// DriftFails reports whether a drift run of the plan fails: a step whose
// drift is not warn (drift: warn) drifted.
func (p *Plan) DriftFails() bool {
	for _, s := range p.Steps {
		if s.Drifted() && !s.DriftWarn {
			return true
		}
	}
	return false
}

// Failing lists the steps the plan predicts apply would fail: a plan
// with any is a failed plan (runner/command.PlanGate, the one rule every
// gate applies).
func (p *Plan) Failing() []PlanStep {
	var out []PlanStep
	for _, s := range p.Steps {
		if s.Action == ActionFail {
			out = append(out, s)
		}
	}
	return out
}

// PlanTotals counts the steps per predicted action.
func PlanTotals(steps []PlanStep) map[Action]int {
	t := map[Action]int{}
	for _, s := range steps {
		t[s.Action]++
	}
	return t
}

// TotalsLine is the terraform-style closing line:
// "Plan: 2 to install, 1 to upgrade, 3 unchanged, 1 excluded."
func TotalsLine(p *Plan) string {
	totals := p.Totals
	if totals == nil {
		totals = PlanTotals(p.Steps)
	}
	var parts []string
	seen := map[Action]bool{}
	for _, a := range actionOrder {
		seen[a] = true
		if n := totals[a]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, phrase(a)))
		}
	}
	var other []string
	for a, n := range totals {
		if !seen[a] && n > 0 {
			other = append(other, fmt.Sprintf("%d %s", n, phrase(a)))
		}
	}
	sort.Strings(other)
	parts = append(parts, other...)
	if len(parts) == 0 {
		parts = []string{"no steps"}
	}
	prefix := "Plan: "
	if p.Offline {
		prefix = "Plan (offline): "
	}
	return prefix + strings.Join(parts, ", ") + "."
}

func phrase(action Action) string {
	if p, ok := actionPhrase[action]; ok {
		return p
	}
	return string(action)
}
