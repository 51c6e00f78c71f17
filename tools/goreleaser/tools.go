//go:build tools

// Package tools pins GoReleaser, which builds khook's release archives and
// images; it is its own module so the release tooling's dependency graph
// never touches khook's go.mod.
package tools

import _ "github.com/goreleaser/goreleaser/v2"
