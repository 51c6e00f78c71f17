package report

// Action is a predicted action (semantics.md, "plan"): the one vocabulary
// from the runner's decisions (runner/kube's change decision, Helm's, each
// executor's) to the plan, its totals and every renderer.
type Action string

// Predicted actions.
const (
	ActionInstall   Action = "install"
	ActionUpgrade   Action = "upgrade"
	ActionUnchanged Action = "unchanged"
	ActionSkip      Action = "skip"
	ActionCreate    Action = "create"
	ActionConfigure Action = "configure"
	ActionDelete    Action = "delete"
	// ActionUninstall: a release a step no longer installs (pruning).
	ActionUninstall Action = "uninstall"
	ActionNoop      Action = "no-op"
	// ActionKeep: an object the step would otherwise delete is kept (a CRD
	// custom resources still use, helm.sh/resource-policy: keep); Reason
	// says why.
	ActionKeep     Action = "keep"
	ActionUnknown  Action = "unknown"
	ActionWait     Action = "wait"
	ActionRestart  Action = "restart"
	ActionRun      Action = "run"
	ActionExcluded Action = "excluded" // when: false
	ActionPlanned  Action = "planned"  // offline: not assessed against a cluster
	// ActionFail: apply would fail the step; Reason is apply's error.
	ActionFail Action = "fail"
)

// Did is what a step did to one object or release (the results'
// counterpart of Action), in change sets.
type Did string

// Outcomes.
const (
	DidCreate    Did = "created"
	DidConfigure Did = "configured"
	DidUnchanged Did = "unchanged"
	DidDelete    Did = "deleted"
	DidInstall   Did = "installed"
	DidUpgrade   Did = "upgraded"
	DidUninstall Did = "uninstalled"
	DidRun       Did = "ran"
	DidRestart   Did = "restarted"
)

// Done is what carrying out a predicted action is reported as: an executor
// decides with the same Action plan predicts with and reports Done of it.
// An action that is no outcome (skip, unknown, ...) is reported unchanged.
func (a Action) Done() Did {
	switch a {
	case ActionCreate:
		return DidCreate
	case ActionConfigure:
		return DidConfigure
	case ActionDelete:
		return DidDelete
	case ActionInstall:
		return DidInstall
	case ActionUninstall:
		return DidUninstall
	case ActionUpgrade:
		return DidUpgrade
	case ActionRun:
		return DidRun
	case ActionRestart:
		return DidRestart
	}
	return DidUnchanged
}
