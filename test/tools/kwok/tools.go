//go:build tools

// Package tools pins kwok, which simulates the test cluster's node and pods; it
// is never compiled into khook itself.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
