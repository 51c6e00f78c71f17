// Package wait holds the waits over the cluster: For, a watch-driven
// (informer) wait over the objects a Target selects, re-evaluated on every
// event with a readiness.Predicate, never polling; Gone, until deleted
// objects have gone (runner/kube's Send and Replace use it through
// kube.SetGone); the progress lines naming what blocks a wait and
// WatchBlockers for Helm's; Diagnose and Unready, what a failed wait's
// objects are stuck on.
//
// May import: runner/kube and its rooms below it (runner/kube/readiness),
// model and the ground floor; no other runner package (layout_test).
package wait
