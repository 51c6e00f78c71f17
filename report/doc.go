// Package report renders khook's results model (package model): terminal
// (the plan text, the results table, the progress views), JSON, the
// Markdown summary and PR/MR comment, GitHub annotations, GitLab's
// Terraform report, JUnit, fleet reports and the step graph. Every renderer
// takes an io.Writer; the CLI and khook ci hand it a redacting one. It owns
// no fact of its own: verdicts, totals and sentences come from the model,
// CI platform limits from internal/ci.
//
// May import: model, spec, redact, sops; no runner (layout_test.go). Only
// the top of the house (internal/cli, internal/ci) imports it.
package report
