package plan

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/sops"
	"github.com/khook/khook/spec"
)

// CheckAPIs is offline validation (khook validate, plan --offline): it
// reads every object khook can read without a cluster or the network —
// the file:, inline: and kustomize: manifests of the included apply steps,
// and the local charts of helm steps rendered as `helm template` would —
// and reports, each at the line that has it:
//   - an API version that Kubernetes v no longer serves (a problem, naming
//     the replacement) or deprecates (a warning, with the version that
//     removes it), at the object's apiVersion line;
//   - what the kind's OpenAPI schema refuses: unknown fields, values of the
//     wrong type, missing required fields, values outside an enum. The
//     schemas are the built-in ones khook carries, plus those of the CRDs
//     the spec itself applies;
//   - sops-encrypted files whose metadata does not parse (problems), and
//     those that do, as warnings that their values were not decrypted
//     (manifest.CheckEncrypted).
func CheckAPIs(ctx context.Context, s *spec.Spec, v apischema.KubeVersion) (problems, warnings spec.Problems) {
	sources, problems, warnings := readOffline(ctx, s, v)
	schemas, err := apischema.BuiltinSchemas()
	if err != nil {
		return append(problems, spec.Problem{Message: err.Error()}), nil
	}
	var all []*unstructured.Unstructured
	for _, src := range sources {
		all = append(all, src.objs...)
	}
	schemas = schemas.WithCRDs(all)
	for _, src := range sources {
		for _, obj := range src.objs {
			at := func(field string) spec.Pos {
				if pos := manifest.SourcePos(obj, field); !pos.IsZero() {
					return pos
				}
				return s.PosOf(src.path)
			}
			if status := apischema.APILifecycle(obj.GroupVersionKind(), v); status != nil {
				p := spec.Problem{Pos: at("apiVersion"), Path: src.path, Message: fmt.Sprintf("%s: %s", kube.ObjectName(obj), status.Error())}
				if status.Removed {
					p.Message += fmt.Sprintf(" (Kubernetes %s)", v)
					problems = append(problems, p)
					continue
				}
				warnings = append(warnings, p)
			}
			if src.encrypted {
				continue
			}
			found, _ := schemas.Validate(obj)
			for _, f := range found {
				problems = append(problems, spec.Problem{
					Pos: at(f.Path), Path: src.path,
					Message: fmt.Sprintf("%s: %s", kube.ObjectName(obj), f.Message),
					Hint:    "checked offline against the OpenAPI schema of Kubernetes " + schemas.Kubernetes,
				})
			}
		}
	}
	encProblems, notes := manifest.CheckEncrypted(s)
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

// objectSource is the objects of one manifest source or one helm step,
// and the spec path problems fall back to.
type objectSource struct {
	path string
	objs []*unstructured.Unstructured
	// encrypted: a sops file read without keys, its encrypted values
	// strings whatever their type, so no schema can judge them.
	encrypted bool
}

func readOffline(ctx context.Context, s *spec.Spec, v apischema.KubeVersion) (out []objectSource, problems, warnings spec.Problems) {
	for _, st := range s.Steps {
		if st.Excluded() {
			continue
		}
		switch m := st.Manifests(); {
		case m.Applied:
			for i, src := range m.Sources {
				if src.URL != "" {
					continue // never the network offline
				}
				path := fmt.Sprintf("%s.%s.%d", st.Path, m.Field, i)
				objs, err := manifest.LoadManifests(ctx, s.BaseDir, []spec.Source{src}, nil)
				if err != nil {
					problems = append(problems, spec.Problem{Pos: s.PosOf(path), Path: path, Message: err.Error()})
					continue
				}
				out = append(out, objectSource{path: path, objs: objs, encrypted: src.File != "" && sops.File(s.BaseDir, src.File)})
			}
		case st.Helm != nil:
			path := st.Path + ".helm.chart"
			rendered, _, err := chartsource.RenderOffline(ctx, s.BaseDir, st, v)
			if err != nil {
				// A template may need the cluster (lookup, its served
				// APIs): the live plan renders it there and says.
				warnings = append(warnings, spec.Problem{Pos: s.PosOf(path), Path: path, Message: err.Error() + " (offline; the live plan renders it against the cluster)"})
				continue
			}
			for _, r := range rendered {
				out = append(out, objectSource{path: path, objs: r.Objects})
			}
		}
	}
	return out, problems, warnings
}

// OfflineWarnings puts CheckAPIs' warnings (deprecated API versions) under
// the steps of an offline plan whose objects have them, as the API
// server's warnings are under a live plan's; asErrors (warnings-as-errors)
// plans such a step as fail.
func OfflineWarnings(p *model.Plan, s *spec.Spec, warnings spec.Problems, asErrors bool) {
	byName := map[string]*model.PlanStep{}
	for i := range p.Steps {
		byName[p.Steps[i].Name] = &p.Steps[i]
	}
	for _, w := range warnings {
		for _, st := range s.Steps {
			ps := byName[st.Name]
			if ps == nil || !strings.HasPrefix(w.Path, st.Path+".") {
				continue
			}
			ps.Warnings = append(ps.Warnings, model.Warning{From: model.WarnerKhook, Message: w.String()})
			if asErrors {
				ps.Action = model.ActionFail
				ps.Reason = "warnings-as-errors is set, and " + w.String()
			}
		}
	}
	p.Totals = model.PlanTotals(p.Steps)
}
