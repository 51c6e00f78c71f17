// Package celenv is the one owner of khook's CEL environments: it builds
// each environment once, on first use, and holds the one cost policy every
// program compiled in it runs under. spec's when: conditions, cel= waits
// (runner/kube evaluates the program spec compiles) and policy rules build
// their environments here; ValidatingAdmissionPolicies are compiled by the
// API server's own admission CEL (runner/policy), under the API server's
// own per-call limit, as a cluster would judge them.
//
// May import: nothing of khook and nothing of Kubernetes (the ground
// floor, beside spec; layout_test).
package celenv

import (
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
)

// The cost policy: a bound on one evaluation, so that a pathological
// expression is an error naming it, never a hang.
const (
	// ConditionCost bounds a when: condition (short comparisons over vars)
	// and a cel= wait against one object (an expression over a large list,
	// object.status.conditions.all(...), stays far below it).
	ConditionCost = 1_000_000
	// RuleCost bounds one policy rule against one change: rules from a
	// pull request are untrusted code, and read whole objects.
	RuleCost = 10_000_000
)

// Env is one CEL environment, declared once and built on first use, with
// the cost limit of every program compiled in it.
type Env struct {
	opts []cel.EnvOption
	cost uint64
	prg  []cel.ProgramOption

	once sync.Once
	env  *cel.Env
	err  error
}

// New declares an environment whose programs run under cost (one of the
// policy's limits) with the program options prg (cel.EvalOptions ...).
func New(cost uint64, prg []cel.ProgramOption, opts ...cel.EnvOption) *Env {
	return &Env{opts: opts, cost: cost, prg: prg}
}

// Get builds the environment the first time and returns it.
func (e *Env) Get() (*cel.Env, error) {
	e.once.Do(func() { e.env, e.err = cel.NewEnv(e.opts...) })
	return e.env, e.err
}

// Program is the program of a checked expression, under the cost limit.
func (e *Env) Program(ast *cel.Ast) (cel.Program, error) {
	env, err := e.Get()
	if err != nil {
		return nil, err
	}
	return env.Program(ast, append([]cel.ProgramOption{cel.CostLimit(e.cost)}, e.prg...)...)
}

// IssueText joins CEL's compile issues on one line, each with its 1-based
// column.
func IssueText(iss *cel.Issues) string {
	errs := iss.Errors()
	msgs := make([]string, 0, len(errs))
	for _, x := range errs {
		msgs = append(msgs, fmt.Sprintf("%s (column %d)", x.Message, x.Location.Column()+1))
	}
	return strings.Join(msgs, "; ")
}
