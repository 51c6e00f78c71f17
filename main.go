// Command khook bootstraps Kubernetes clusters from a declarative spec. It
// owns the process's one os.Exit and hands everything else to internal/cli,
// the only package it imports (docs/architecture.md).
package main

import (
	"os"

	"github.com/khook/khook/internal/cli"
)

func main() { os.Exit(cli.Main()) }
