package shscript

import (
	"strings"
	"testing"
)

// What held-out trial 46zf (networking, identity, demo-app and
// multi-cluster installers, run once on ff49685) showed, each cut down.

// D1 (a Karmada lab): a file the script writes and then sources, and D2
// (a CloudLab profile): one of the machine the script runs on, are no
// bad input: named at the line, the rest carried. A file of the checkout
// that is not there still is (TestBadInput).
func TestSourcedFileNotOfTheCheckout(t *testing.T) {
	for name, src := range map[string]string{
		"written": "#!/bin/bash\nset -e\necho 'export KUBE_NS=\"demo\"' >> .bashrc && source .bashrc\nkubectl create namespace demo\n",
		"machine": "#!/bin/sh\nset -e\nOURDIR=/local/setup\n. $OURDIR/parameters\nkubectl create namespace demo\n",
	} {
		res := importScript(t, map[string]string{"install.sh": src})
		if len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "it sources") || !strings.Contains(string(res.Spec), "name: demo") {
			t.Errorf("%s: %v\n%s", name, res.Model.NotCarried, res.Spec)
		}
	}
}
