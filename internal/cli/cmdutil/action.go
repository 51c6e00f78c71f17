package cmdutil

import (
	"errors"

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/action"
	"github.com/khook/khook/runner/kube"
)

// ActionConfig is the configuration runner/action needs, from the global
// flags; clients, when set, replace the kubeconfig's (tests).
func (f *Factory) ActionConfig(clients *kube.Clients) *action.Configuration {
	return &action.Configuration{
		Kubeconfig: f.Global.Kubeconfig, Context: f.Global.Context, Clients: clients,
		Redactor: f.Redactor, Now: f.Now, Version: f.Version,
	}
}

// NotStarted reports a run that never started: JSON output gets the
// results document (the run-level error is in it and logged), text gets
// the error.
func (f *Factory) NotStarted(output string, res *report.Results) error {
	if output != OutputJSON {
		return errors.New(res.Error)
	}
	if err := report.WriteJSON(f.IOStreams.Out, res); err != nil {
		return err
	}
	f.Logger.Error(res.Command+" did not start", "error", res.Error)
	return Silent(ExitFailure)
}
