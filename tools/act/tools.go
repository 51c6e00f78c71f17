//go:build tools

// Package tools pins nektos/act, which runs the example workflows and the
// Action in test/act as a runner would; its own module keeps act's
// dependencies (the Docker client among them) apart from khook's.
package tools

import _ "github.com/nektos/act"
