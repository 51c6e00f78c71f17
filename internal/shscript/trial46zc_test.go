package shscript

import (
	"strings"
	"testing"
)

// What held-out trial 46zc (vendor installers, run once on 3314dd1)
// showed, each cut down. D2 and D7 are TestExitGuardMakesSecretRequired
// and TestWrappersRunTheirCommand.

// D4 (Mach5's eksctl.sh): helm pull of an OCI chart, then helm install of
// the .tgz it wrote, then rm of it: the step installs the chart itself.
func TestPulledPackageIsItsChart(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
VERSION=1.2.3
helm pull oci://registry.example.com/vendor/app --version $VERSION -d charts
helm upgrade --install app -n app --create-namespace charts/app-$VERSION.tgz
rm charts/app-$VERSION.tgz
`})
	spec := string(res.Spec)
	if want := "      chart: oci://registry.example.com/vendor/app\n      version: 1.2.3\n"; !strings.Contains(spec, want) {
		t.Errorf("no %q in:\n%s", want, spec)
	}
	if res.Model.Verdict() != "faithful" {
		t.Errorf("verdict %s: %v", res.Model.Verdict(), res.Model.NotCarried)
	}
}

// D10 (Mach5's common.sh): aws eks --region R update-kubeconfig picks the
// cluster, whatever flags stand between its words.
func TestCloudLoginWithFlagsBetween(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
aws eks --region us-east-1 update-kubeconfig --name mach5-cluster
kubectl create namespace app
`})
	var why []string
	for _, n := range res.Model.NotCarried {
		why = append(why, n.String())
	}
	if all := strings.Join(why, "\n"); !strings.Contains(all, "install.sh:3: aws eks --region us-east-1 update-kubeconfig --name mach5-cluster: it picks the cluster") {
		t.Errorf("not carried:\n%s", all)
	}
}
