//go:build tools

// Package tools pins GoReleaser, which builds khook's release archives and
// images; it is its own module so the release tooling's dependency graph
// never touches khook's go.mod.
//
// GoReleaser v2.18 needs Go 1.27.1 to build: with GOTOOLCHAIN=auto (the
// Makefile and test/release set it for this build only) the go command fetches
// that toolchain from the module proxy; khook itself still builds with the
// toolchain on PATH. nfpm's MSIX packager links go.digitalxero.dev/go-msix,
// which the module proxy here does not serve; msixstub replaces it with a
// package whose every call fails (khook builds no MSIX packages).
package tools

import _ "github.com/goreleaser/goreleaser/v2"
