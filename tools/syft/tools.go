//go:build tools

// Package tools pins syft, which writes the SBOM of each release archive; its
// own module keeps its dependencies apart from khook's and GoReleaser's.
package tools

import _ "github.com/anchore/syft/cmd/syft"
