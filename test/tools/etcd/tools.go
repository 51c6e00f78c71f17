//go:build tools

// Package tools pins the etcd server that the khook test cluster builds; it is
// never compiled into khook itself.
package tools

import _ "go.etcd.io/etcd/server/v3"
