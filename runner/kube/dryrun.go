package kube

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DryRunStrategy is how an executor's one path reaches the cluster: Execute
// writes (DryRunNone), Plan sends every write as the API server's dry run
// (DryRunServer: DryRun=All, nothing persisted, no waits). One typed
// strategy for every step type, spelled as Helm v4's action.DryRunStrategy
// (the helm executor hands it to Helm's actions as is). The zero value is a
// dry run: a path handed no strategy never writes.
type DryRunStrategy string

const (
	// DryRunNone writes: apply.
	DryRunNone DryRunStrategy = "none"
	// DryRunServer asks the API server what each write would do: plan.
	DryRunServer DryRunStrategy = "server"
)

// IsDryRun: nothing is written.
func (s DryRunStrategy) IsDryRun() bool { return s != DryRunNone }

// Options is the API's dryRun option of a write under the strategy.
func (s DryRunStrategy) Options() []string {
	if s.IsDryRun() {
		return []string{metav1.DryRunAll}
	}
	return nil
}
