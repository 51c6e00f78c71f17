// Package readiness decides whether an object is ready and why not: Ready
// (kstatus, then Ready/Available/Established conditions and phases),
// NewCondition(spec.WaitFor) with Condition.Met/Evaluate (condition=,
// jsonpath=, cel=, ready, delete; the grammar is spec.ParseWaitFor's alone)
// and Status, kstatus's verdict as a model.DiagnosedObject. Pure: it reads
// objects handed to it and needs no client.
//
// May import: of khook only model and the ground floor (spec, redact, words,
// sops); no client-go client (layout_test).
package readiness
