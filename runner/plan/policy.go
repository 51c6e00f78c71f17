package plan

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/runner/policy"
	"github.com/khook/khook/spec"
)

// checkPolicies is the live plan's one hook into the policies: a step's
// predicted objects, each with what would be written and what is live,
// against every rule. A deny makes the step fail; a warn is a warning.
func (pr *probe) checkPolicies(ctx context.Context, objs []runner.PlannedObject) {
	if pr.Policies == nil {
		return
	}
	changes := make([]policy.Change, 0, len(objs))
	for _, o := range objs {
		if o.Kind == "Namespace" && o.Desired != nil && o.Desired.GroupVersionKind().Group == "" {
			pr.Policies.DefineNamespace(o.Name, o.Desired.GetLabels())
		}
		changes = append(changes, policy.Change{Action: o.Action, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Desired: o.Desired, Live: o.Live})
	}
	record(pr.out, pr.Policies.Check(ctx, pr.step, changes), pr.Redactor.String)
}

func record(ps *model.PlanStep, res policy.Result, mask func(string) string) {
	vs := res.Violations
	for i := range vs {
		vs[i].Message = mask(vs[i].Message)
	}
	model.RecordViolations(ps, vs)
	for _, a := range res.Annotations {
		a.Value = mask(a.Value)
		ps.AuditAnnotations = append(ps.AuditAnnotations, a)
	}
}

// OfflinePolicies checks an offline plan's objects against the policies:
// what it can read without a cluster (local manifests and charts, as
// CheckAPIs reads them) as planned (create or update: not assessed), and
// the objects a delete step's manifests name as delete.
func OfflinePolicies(ctx context.Context, p *model.Plan, s *spec.Spec, set *policy.Set, v apischema.KubeVersion) {
	if set == nil {
		return
	}
	byStep := map[string][]policy.Change{}
	sources, _, _ := readOffline(ctx, s, v)
	var all []*unstructured.Unstructured
	for _, src := range sources {
		if st := stepOfPath(s, src.path); st != nil && !src.encrypted && !st.Excluded() {
			all = append(all, src.objs...)
		}
	}
	set.DefineSpecNamespaces(s, all)
	for _, src := range sources {
		st := stepOfPath(s, src.path)
		if st == nil || src.encrypted {
			continue
		}
		for _, o := range src.objs {
			byStep[st.Name] = append(byStep[st.Name], policy.Change{Action: model.ActionPlanned, Kind: o.GetKind(), Namespace: namespaceOf(o, st), Name: o.GetName(), Desired: o})
		}
	}
	for _, st := range s.Steps {
		m := st.Manifests()
		if st.Excluded() || m.Applied || len(m.Sources) == 0 {
			continue // applied objects came with the offline render above
		}
		objs, err := manifest.LoadManifests(ctx, s.BaseDir, localOnly(m.Sources), nil)
		if err != nil {
			continue // validate reports it
		}
		for _, o := range objs {
			byStep[st.Name] = append(byStep[st.Name], policy.Change{Action: model.ActionDelete, Kind: o.GetKind(), Namespace: namespaceOf(o, st), Name: o.GetName(), Live: o})
		}
	}
	for i := range p.Steps {
		ps := &p.Steps[i]
		st := s.Step(ps.Name)
		if st == nil || st.Excluded() {
			continue
		}
		record(ps, set.Check(ctx, st, byStep[st.Name]), func(s string) string { return s })
	}
	p.Totals = model.PlanTotals(p.Steps)
	p.PolicyFiles, p.PolicyNotes = set.Files, set.PlanNotes()
}

func localOnly(srcs []spec.Source) []spec.Source {
	var out []spec.Source
	for _, s := range srcs {
		if s.URL == "" {
			out = append(out, s)
		}
	}
	return out
}

func stepOfPath(s *spec.Spec, path string) *spec.Step {
	for _, st := range s.Steps {
		if strings.HasPrefix(path, st.Path+".") {
			return st
		}
	}
	return nil
}

// clusterScoped are the built-in kinds with no namespace: an offline plan
// cannot ask the cluster.
var clusterScoped = map[string]bool{"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "CustomResourceDefinition": true,
	"StorageClass": true, "PersistentVolume": true, "Node": true, "PriorityClass": true, "ValidatingWebhookConfiguration": true,
	"MutatingWebhookConfiguration": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true, "APIService": true,
	"IngressClass": true, "RuntimeClass": true, "CSIDriver": true, "VolumeSnapshotClass": true}

// namespaceOf is an object's namespace as apply would write it: its own,
// else the step's (or default), unless its kind is cluster-scoped.
func namespaceOf(o *unstructured.Unstructured, st *spec.Step) string {
	if ns := o.GetNamespace(); ns != "" || clusterScoped[o.GetKind()] {
		return ns
	}
	if m := st.Manifests(); m.Sources != nil {
		return spec.NamespaceOrDefault(m.Namespace)
	}
	if b := st.Block(); b != nil {
		if _, ns, ok := b.HelmRelease(); ok {
			return spec.NamespaceOrDefault(ns)
		}
	}
	return spec.DefaultNamespace
}
