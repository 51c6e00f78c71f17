package helmstep

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v4/pkg/action"
	helmkube "helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner"
)

// Uninstall removes a release and waits (watch-driven, bounded by ctx's
// deadline) until its resources are gone, like helm uninstall --wait. An
// absent release is success when ignoreNotFound, else an error.
func (e *Executor) Uninstall(ctx context.Context, release, namespace string, ignoreNotFound bool) (runner.Outcome, error) {
	out, err := e.uninstall(ctx, release, namespace, ignoreNotFound)
	return out, e.redactor.Error(err)
}

func (e *Executor) uninstall(ctx context.Context, name, ns string, ignoreNotFound bool) (runner.Outcome, error) {
	if ns == "" {
		ns = "default"
	}
	sess, last, err := e.open(name, ns)
	if err != nil {
		return runner.Outcome{}, err
	}
	if last == nil || (last.Info != nil && last.Info.Status == rcommon.StatusUninstalled) {
		if ignoreNotFound {
			return runner.Outcome{Detail: fmt.Sprintf("release %s not found in namespace %s: nothing to uninstall", name, ns)}, nil
		}
		return runner.Outcome{}, fmt.Errorf("release %s not found in namespace %s (set ignoreNotFound: true to accept an absent release)", name, ns)
	}
	un := action.NewUninstall(sess.cfg)
	un.WaitStrategy = helmkube.StatusWatcherStrategy
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
		out.Detail = fmt.Sprintf("uninstalled release %s (revision %d) from namespace %s", name, last.Version, ns)
		out.Changes = releaseChange(report.DidUninstall, name, ns)
		return out, nil
	}
}

// releaseChange is a helm step's change set: its one release.
func releaseChange(action, name, ns string) []report.Change {
	return []report.Change{{Action: action, Kind: report.KindRelease, Namespace: ns, Name: name}}
}
