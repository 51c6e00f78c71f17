package plan

import (
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/khook/khook/runner/kube"
)

// lookupConfig is the REST config a chart's templates read the cluster
// with (cfg wrapped), under the lookup-secrets policy. Helm's own release
// storage is read through the clients as before.
func (pr *probe) lookupConfig(cfg *rest.Config) *rest.Config {
	switch pr.LookupSecrets {
	case LookupDeny:
		return kube.DenySecretReads(cfg, func() { pr.lookupDenied.Store(true) })
	case LookupAllow:
		return kube.UnmaskedSecretReads(cfg)
	}
	return cfg
}

// sayLookupsDenied says once, in the step's summary, that the chart's
// lookups of Secrets were denied: what it rendered from them is what a
// client-side render gives, not what apply will install.
func (pr *probe) sayLookupsDenied(chart string) {
	if !pr.lookupDenied.Swap(false) {
		return
	}
	name := "the chart"
	if chart != "" {
		name = "chart " + chart
	}
	pr.out.Summary += fmt.Sprintf(" (lookup-secrets: deny: %s looked up Secrets and got none, so what it renders from them is not what apply installs)", name)
}
