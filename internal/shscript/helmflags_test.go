package shscript

import (
	"strings"
	"testing"
)

// Helm 4's --server-side and --force-conflicts are what khook's helm steps
// do (a warning); --no-hooks, --enable-dns and the TLS flags change what
// is installed or fetched, so the command is partial, each with why.
func TestHelmFlagsSaidAsTheyMatter(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
helm upgrade --install a a --repo https://charts.example.com --version 1.0.0 -n a --server-side=true --force-conflicts
helm upgrade --install b b --repo https://charts.example.com --version 1.0.0 -n b --no-hooks --enable-dns
helm upgrade --install c c --repo https://charts.example.com --version 1.0.0 -n c --ca-file ./ca.pem --insecure-skip-tls-verify
`})
	var notes []string
	for _, n := range res.Model.NotCarried {
		notes = append(notes, n.String())
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{"install.sh:3: --no-hooks: khook runs the chart's hooks", "install.sh:3: --enable-dns: khook renders charts", "install.sh:4: --ca-file: khook checks", "install.sh:4: --insecure-skip-tls-verify: khook checks"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "install.sh:2") {
		t.Errorf("--server-side/--force-conflicts not carried:\n%s", all)
	}
	if got := len(infoLines(res.Model, "apply server-side")); got != 2 {
		t.Errorf("%d warnings for --server-side/--force-conflicts, want 2", got)
	}
}
