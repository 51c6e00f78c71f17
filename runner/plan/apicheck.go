package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// CheckAPIs reads the manifests of every included apply step that khook
// can read without a cluster or the network (file: and inline: sources)
// and reports each object in an API version that Kubernetes v no longer
// serves (problems, naming the replacement) or deprecates (warnings, with
// the version that removes it), at the object's apiVersion line. It checks
// the sops-encrypted files too (CheckEncrypted): their notes are warnings.
func CheckAPIs(ctx context.Context, s *spec.Spec, v kube.KubeVersion) (problems, warnings spec.Problems) {
	for _, st := range s.Steps {
		if st.Excluded() || st.Apply == nil {
			continue
		}
		for i, src := range st.Apply.Manifests {
			if src.File == "" && src.Inline == "" {
				continue
			}
			path := fmt.Sprintf("%s.apply.manifests.%d", st.Path, i)
			objs, err := kube.LoadManifests(ctx, s.BaseDir, []spec.Source{src}, nil)
			if err != nil {
				problems = append(problems, spec.Problem{Pos: s.PosOf(path), Path: path, Message: err.Error()})
				continue
			}
			for _, obj := range objs {
				status := kube.APILifecycle(obj.GroupVersionKind(), v)
				if status == nil {
					continue
				}
				pos := kube.SourcePos(obj, "apiVersion")
				if pos.IsZero() {
					pos = s.PosOf(path)
				}
				p := spec.Problem{Pos: pos, Path: path, Message: fmt.Sprintf("%s: %s", kube.ObjectName(obj), status.Error())}
				if status.Removed {
					p.Message += fmt.Sprintf(" (Kubernetes %s)", v)
					problems = append(problems, p)
				} else {
					warnings = append(warnings, p)
				}
			}
		}
	}
	encProblems, notes := CheckEncrypted(s)
	for _, p := range encProblems {
		if !hasProblem(problems, p) { // a manifest's is there already
			problems = append(problems, p)
		}
	}
	warnings = append(warnings, notes...)
	problems.Sort()
	warnings.Sort()
	return problems, warnings
}

func hasProblem(ps spec.Problems, p spec.Problem) bool {
	for _, q := range ps {
		if q.Path == p.Path && strings.Contains(q.Message, p.Message) {
			return true
		}
	}
	return false
}
