package ci

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/spec"
)

// readFleetInputs checks the fleet inputs' combinations.
func readFleetInputs(in *Inputs, raw map[string]string) []string {
	var errs []string
	if w := strings.TrimSpace(raw["wave"]); w != "" {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Sprintf("input wave %q is not a wave number (1, 2, ...)", w))
		}
		in.Wave = n
	}
	switch {
	case in.Command == CmdFleetReport && in.Fleet == "":
		errs = append(errs, "command fleet-report needs the fleet input: the fleet file whose legs to report")
	case in.Command == CmdFleetReport && in.Cluster != "":
		errs = append(errs, "command fleet-report reports every cluster of the fleet: drop the cluster input")
	case in.Cluster != "" && in.Fleet == "":
		errs = append(errs, "input cluster needs the fleet input: the fleet file that defines the cluster")
	case in.Fleet != "" && in.Cluster == "" && in.Command != CmdFleetReport:
		errs = append(errs, fmt.Sprintf("input fleet with command %s runs one leg: set the cluster input (the matrix's cluster)", in.Command))
	}
	return errs
}

// fleetLeg is the leg this run is: its fleet and cluster.
type fleetLeg struct {
	fleet   *spec.Fleet
	cluster *spec.FleetCluster
}

// loadFleet loads the fleet input's file; problems become one input error
// each at file:line:col.
func (r *runState) loadFleet() (*spec.Fleet, error) {
	fl, err := spec.LoadFleet(r.abs(r.in.Fleet))
	var ps spec.Problems
	if errors.As(err, &ps) {
		lines := make([]string, len(ps))
		for i, p := range ps {
			p.Pos.File = r.relPath(p.Pos.File)
			lines[i] = p.String()
		}
		return nil, fmt.Errorf("the fleet file is invalid:\n%s", strings.Join(lines, "\n"))
	}
	return fl, err
}

// useFleet turns a leg's inputs (fleet and cluster) into the run's: its
// spec inputs as spec.Fleet.Leg puts them before the var-file, vars and
// policies inputs, its context, the kubeconfig its
// kubeconfigSecret names when the kubeconfig input is empty, the cluster
// as identifier, and no comment nor drift issue (the fleet report keeps
// the fleet's one of each).
func (r *runState) useFleet() error {
	if r.in.Fleet == "" || r.in.Command == CmdFleetReport {
		return nil
	}
	fl, err := r.loadFleet()
	if err != nil {
		return err
	}
	c, err := fl.Cluster(r.in.Cluster)
	if err != nil {
		return err
	}
	r.leg = &fleetLeg{fleet: fl, cluster: c}
	inputs := fl.Leg(c, spec.LegInputs{VarFiles: r.in.VarFiles, Set: r.in.Vars, Policies: r.in.Policies})
	r.in.Files, r.in.VarFiles, r.in.Vars, r.in.Policies = inputs.Files, inputs.VarFiles, inputs.Set, inputs.Policies
	if r.in.Context == "" {
		r.in.Context = c.Context
	}
	if r.in.Kubeconfig == "" && c.KubeconfigSecret != "" {
		if kc := r.getenv(c.KubeconfigSecret); kc != "" {
			r.in.Kubeconfig = kc
			for _, s := range kubeconfigSecrets([]byte(kc)) {
				r.red.Add(s)
			}
		}
	}
	r.in.Identifier = c.Name
	r.in.Comment = CommentNever
	r.in.DriftIssue = false // the fleet report keeps the fleet's one issue
	// A leg posts no comment of its own, so there is no per-cluster
	// reviewed plan for plan-check to find: unset, it is off for legs
	// (hold a leg's apply to its plan with plan-file instead).
	if r.in.PlanCheck == "" {
		r.in.PlanCheck = model.PlanCheckOff
	}
	return nil
}

// writeLeg writes the leg's results file for the fleet report.
func (r *runState) writeLeg(oc *outcome) {
	if r.leg == nil {
		return
	}
	l := &model.Leg{
		Kind: model.LegKind, Fleet: r.leg.fleet.Metadata.Name, Cluster: r.leg.cluster.Name, Wave: r.leg.cluster.Wave,
		Command: oc.command, Status: oc.status, FailureReason: oc.reason, Error: oc.runErr, Drift: oc.drift,
		SummaryURL: r.sink.runURL(), Plan: oc.plan, Results: oc.results,
	}
	if len(oc.problems) > 0 {
		l.Error = "the spec is invalid:\n" + oc.problems.Error()
	}
	if oc.plan != nil {
		l.Changes, l.Fingerprint = oc.plan.Changes, oc.plan.Fingerprint
		// The fleet report shows no plan: a leg whose plan predicts a
		// failure says which steps and why, as plan --fleet's rows do.
		var failed *command.PlanFailedError
		if l.Error == "" && errors.As(command.PlanGate(oc.plan), &failed) {
			l.Error = r.red.String(failed.WithReasons())
		}
	}
	if oc.results != nil {
		l.Changes = oc.results.Changed()
		if l.Error == "" {
			l.Error = oc.results.Error
		}
	}
	if _, err := r.writeFile(model.LegFileName(l.Cluster), func(w io.Writer) error { return report.WriteJSON(w, l) }); err != nil {
		r.warn(err.Error())
	}
}

// KubeconfigSecrets are the credentials in a kubeconfig's content (tokens,
// passwords, client keys), for the CLI to register with its redactor when
// it reads a fleet cluster's kubeconfigSecret.
func KubeconfigSecrets(content []byte) []string { return kubeconfigSecrets(content) }
