// Command khook bootstraps Kubernetes clusters from a declarative spec.
package main

import (
	"os"

	"github.com/khook/khook/internal/cli"
)

func main() { os.Exit(cli.Main()) }
