//go:build tools

// Package tools pins GoReleaser, which builds khook's release archives and
// images; it is its own module so the release tooling's dependency graph
// never touches khook's go.mod.
//
// v2.17.0 is the newest GoReleaser that builds with the Go khook builds with
// (v2.18 needs Go 1.27), and every module it shares with khook is at
// khook's version (TestToolModulesShareKhookVersions): with the same
// toolchain and flags, about two thirds of its packages are the ones make
// test already compiled for khook, so a run from nothing compiles them once.
// nfpm's MSIX packager links go.digitalxero.dev/go-msix,
// which the module proxy here does not serve; msixstub replaces it with a
// package whose every call fails (khook builds no MSIX packages).
package tools

import _ "github.com/goreleaser/goreleaser/v2"
