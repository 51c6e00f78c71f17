package helmstep

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	helmkube "helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rel "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
)

// Uninstall removes a release and waits (watch-driven, bounded by ctx's
// deadline) until its resources are gone, like helm uninstall --wait. An
// absent release is success when ignoreNotFound, else an error.
func (e *Executor) Uninstall(ctx context.Context, release, namespace string, ignoreNotFound bool) (runner.Outcome, error) {
	out, err := e.uninstall(ctx, release, namespace, ignoreNotFound)
	kube.InvalidateLive(ctx) // the release's objects are going: later reads list again
	return out, e.redactor.Error(err)
}

// Installed reports whether release name stands in namespace ns (any
// revision not uninstalled): the removal decision (decideRemoval) pruning
// carries out by uninstalling, plan and apply alike.
func (e *Executor) Installed(name, ns string) (bool, error) {
	r, err := e.openRemoval(name, ns, true)
	if err != nil {
		return false, e.redactor.Error(err)
	}
	return decideRemoval(r.Name, r.Namespace, r.Last, true).do == doUninstall, nil
}

// installed: the release has a revision that is not uninstalled. The one
// definition, for skipIf: installed, delete.release, pruning and destroy.
func installed(last *rel.Release) bool {
	return last != nil && last.Info != nil && last.Info.Status != rcommon.StatusUninstalled
}

// PlanDeleteRelease predicts delete.release: the reconciler's decision
// (decideRemoval), as Uninstall carries it out, as a prediction.
func (e *Executor) PlanDeleteRelease(ctx context.Context, st *spec.Step) (runner.Prediction, error) {
	d := st.Delete
	r, err := e.openRemoval(d.Release, spec.NamespaceOrDefault(d.Namespace), d.IgnoresNotFound())
	if err != nil {
		return runner.Prediction{}, err
	}
	dec := e.decide(ctx, r)
	switch dec.do {
	case doFail:
		return runner.Prediction{}, dec.err
	case doAbsent:
		return runner.Prediction{Action: model.ActionNoop, Reason: "nothing to delete: already absent"}, nil
	}
	target := dec.target
	return runner.Prediction{Action: model.ActionDelete, Reason: "1 object to delete", Objects: []runner.PlannedObject{{
		Action: model.ActionDelete, Kind: "HelmRelease", Namespace: r.Namespace, Name: d.Release,
		LiveDigest: []byte(target.Namespace + "/" + target.Name + "/" + strconv.Itoa(target.Version)),
	}}}, nil
}

// openRemoval opens a release that should be gone (delete.release, prune,
// destroy) for decide.
func (e *Executor) openRemoval(name, ns string, ignoreNotFound bool) (*Release, error) {
	r, err := e.OpenRelease(name, ns)
	if err != nil {
		return nil, err
	}
	r.remove = &removal{ignoreNotFound: ignoreNotFound}
	return r, nil
}

func (e *Executor) uninstall(ctx context.Context, name, ns string, ignoreNotFound bool) (runner.Outcome, error) {
	r, err := e.openRemoval(name, spec.NamespaceOrDefault(ns), ignoreNotFound)
	if err != nil {
		return runner.Outcome{}, err
	}
	dec := e.decide(ctx, r)
	switch dec.do {
	case doFail:
		return runner.Outcome{}, dec.err
	case doAbsent:
		return runner.Outcome{Detail: dec.reason}, nil
	}
	sess, last := r.sess, dec.target
	ns = r.Namespace
	kept, err := keepCRDs(sess.cfg, last)
	if err != nil {
		return runner.Outcome{Writes: int(sess.writes.Load())}, e.clients.Explain(fmt.Errorf("release %s in namespace %s: cannot mark its CRDs to be kept: %w", name, ns, err))
	}
	deleted := toBeDeleted(ctx, e.clients, last)
	un := action.NewUninstall(sess.cfg)
	// Helm waits for the hooks; khook waits for the deletions, by UID.
	un.WaitStrategy = helmkube.HookOnlyStrategy
	un.Timeout = helmTimeout(ctx, false)
	un.DeletionPropagation = "background"
	un.IgnoreNotFound = ignoreNotFound
	type result struct{ err error }
	done := make(chan result, 1)
	go func() { _, err := un.Run(name); done <- result{err} }()
	select {
	case <-ctx.Done():
		return runner.Outcome{Writes: int(sess.writes.Load())}, fmt.Errorf("release %s in namespace %s: uninstall did not finish: %w", name, ns, context.Cause(ctx))
	case r := <-done:
		out := runner.Outcome{Writes: int(sess.writes.Load())}
		if r.err != nil {
			if errors.Is(r.err, context.DeadlineExceeded) {
				return out, fmt.Errorf("release %s in namespace %s: its resources were not gone before the step timeout: %w", name, ns, r.err)
			}
			return out, e.clients.Explain(fmt.Errorf("release %s in namespace %s: uninstall failed: %w", name, ns, r.err))
		}
		if err := wait.Gone(ctx, e.clients, deleted); err != nil {
			return out, fmt.Errorf("release %s in namespace %s: uninstalled, but its resources were not gone before the step timeout: %w", name, ns, err)
		}
		out.Detail = fmt.Sprintf("uninstalled release %s (revision %d) from namespace %s", name, last.Version, ns)
		if len(kept) > 0 {
			out.Detail += fmt.Sprintf("; kept its %s %s (deleting a CRD deletes every resource of its kind)", map[bool]string{true: "CRD", false: "CRDs"}[len(kept) == 1], strings.Join(kept, ", "))
		}
		out.Changes = releaseChange(model.DidUninstall, name, ns)
		return out, nil
	}
}

// keepCRDs marks every CustomResourceDefinition of the release's manifest
// with helm.sh/resource-policy: keep in its stored last revision, so that
// the uninstall that follows leaves them, as Helm leaves the CRDs of a
// chart's crds/ directory. A chart that renders CRDs from templates would
// otherwise have them deleted, and with them every custom resource of their
// kinds in the whole cluster, whoever made them. It returns the CRDs' names.
func keepCRDs(cfg *action.Configuration, last *rel.Release) ([]string, error) {
	docs := releaseutil.SplitManifests(last.Manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Strings(keys) // SplitManifests keys are manifest-0, manifest-1, ...; any stable order will do
	var kept []string
	changed := false
	for _, k := range keys {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(docs[k]), &obj); err != nil || obj == nil {
			continue
		}
		u := unstructured.Unstructured{Object: obj}
		if u.GetKind() != "CustomResourceDefinition" || !strings.HasPrefix(u.GetAPIVersion(), "apiextensions.k8s.io/") {
			continue
		}
		kept = append(kept, u.GetName())
		ann := u.GetAnnotations()
		if strings.EqualFold(strings.TrimSpace(ann[helmkube.ResourcePolicyAnno]), helmkube.KeepPolicy) {
			continue
		}
		if ann == nil {
			ann = map[string]string{}
		}
		ann[helmkube.ResourcePolicyAnno] = helmkube.KeepPolicy
		u.SetAnnotations(ann)
		out, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		docs[k] = string(out)
		changed = true
	}
	if !changed {
		return kept, nil
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("---\n" + docs[k] + "\n")
	}
	last.Manifest = b.String()
	return kept, cfg.Releases.Update(last)
}

// releaseChange is a helm step's change set: its one release.
func releaseChange(action model.Did, name, ns string) []model.Change {
	return []model.Change{{Action: action, Kind: model.KindRelease, Namespace: ns, Name: name}}
}
