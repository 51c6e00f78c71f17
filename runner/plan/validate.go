package plan

import (
	"context"
	"errors"

	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/runner/policy"
	"github.com/khook/khook/spec"
)

// Validate is what `khook validate` checks of a loaded spec beyond
// spec.Load, offline: every object the included apply steps apply and
// their local charts render, against v's schemas and API versions
// (CheckAPIs), and the admission policies of --policy files, compiled as
// plan and apply compile them (the spec's own rules compiled at load).
// Problems make the spec invalid; warnings (deprecated API versions, a
// chart that renders only against a cluster) do not. `khook import`
// checks the spec it writes with it, so what it writes validates.
func Validate(ctx context.Context, s *spec.Spec, v apischema.KubeVersion) (problems, warnings spec.Problems) {
	problems, warnings = CheckAPIs(ctx, s, v)
	if _, err := policy.New(s); err != nil {
		var ps spec.Problems
		if !errors.As(err, &ps) {
			ps = spec.Problems{{Message: err.Error()}}
		}
		problems = append(problems, ps...)
		problems.Sort()
	}
	return problems, warnings
}
