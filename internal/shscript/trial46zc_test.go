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

// Calico Enterprise's installer deletes the pull Secret to create it again
// from a file, which is not carried: the delete is not carried either
// (the spec would delete the Secret on every run and never make it). A
// delete before a create that is carried folds into the apply step, which
// updates in place (onImmutable: recreate); a Job deleted to run again
// stays a delete and an apply.
func TestDeleteThenCreate(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl delete secret app-cred -n app --ignore-not-found
kubectl create secret generic app-cred -n app --from-literal=password="$APP_PASSWORD"
kubectl delete secret tigera-pull-secret -n tigera-operator --ignore-not-found
kubectl create secret generic tigera-pull-secret --type=kubernetes.io/dockerconfigjson -n tigera-operator --from-file=.dockerconfigjson=pull.json
kubectl delete job migrate -n app --ignore-not-found
kubectl apply -f job.yaml
`, "pull.json": "{}\n", "job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: app}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: ghcr.io/acme/migrate:1}]\n"})
	spec := string(res.Spec)
	for line, want := range map[int]string{3: "folded", 4: "step", 5: "not carried", 6: "not carried", 7: "step", 8: "step"} {
		if got := fateAt(res.Model, line); got != want {
			t.Errorf("line %d: %q, want %q", line, got, want)
		}
	}
	if !strings.Contains(spec, "  - name: secret-app-cred\n    onImmutable: recreate\n") || strings.Contains(spec, "delete-secret") {
		t.Errorf("spec:\n%s", spec)
	}
}

// D6 (a GPU operator installer): helm "${helm_args[@]}" whose first word
// is $action, install or upgrade as helm status decides, is one helm step.
func TestActionInstallOrUpgrade(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -euo pipefail
NAMESPACE=gpu-operator
RELEASE=gpu-operator
helm repo add nvidia https://helm.ngc.nvidia.com/nvidia
action="install"
if helm -n "$NAMESPACE" status "$RELEASE" >/dev/null 2>&1; then
  action="upgrade"
fi
helm_args=(
  "$action" "$RELEASE" nvidia/gpu-operator
  -n "$NAMESPACE" --create-namespace --wait
  --set driver.enabled=false
)
helm "${helm_args[@]}"
`})
	if fateAt(res.Model, 15) != "step" || !strings.Contains(string(res.Spec), "      chart: gpu-operator\n      repo: https://helm.ngc.nvidia.com/nvidia\n") {
		t.Errorf("line 15: %s\n%s", fateAt(res.Model, 15), res.Spec)
	}
}

// D8 (Mach5's eksctl.sh): a folder of the repository copied with cp -R
// into one the script makes; kubectl apply and helm -f of the copies read
// the committed files.
func TestCopiedFolderIsItsSource(t *testing.T) {
	res := importScript(t, map[string]string{
		"eksctl/gp3-storageclass.yaml": "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: gp3}\nprovisioner: ebs.csi.aws.com\n",
		"eksctl/values.yaml":           "replicas: 2\n",
		"install.sh": `#!/bin/bash
set -e
BASE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$BASE/_cluster"
mkdir -p "$WORK"
cp -R "$BASE/eksctl" "$WORK/"
kubectl apply -f $WORK/eksctl/gp3-storageclass.yaml
helm upgrade --install app oci://registry.example.com/vendor/app --version 1.0.0 -n app --create-namespace -f $WORK/eksctl/values.yaml
`})
	spec := string(res.Spec)
	for _, want := range []string{"        - file: ./eksctl/gp3-storageclass.yaml\n", "        - file: ./eksctl/values.yaml\n"} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in:\n%s", want, spec)
		}
	}
	if res.Model.Verdict() != "faithful" {
		t.Errorf("verdict %s: %v", res.Model.Verdict(), res.Model.NotCarried)
	}
}

// D5 (Mach5's common.sh): yq reads the release and namespace from a copy
// the script makes of its config: read at import from the committed file,
// not taken for secrets.
func TestYqReadsACopy(t *testing.T) {
	res := importScript(t, map[string]string{
		"config.yaml": "app:\n  release-name: m5s\n  namespace: mach5\n",
		"install.sh": `#!/bin/bash
set -e
mkdir -p _work
cp config.yaml _work/config.yaml
CFG=_work/config.yaml
RELEASE=$(yq '.app.release-name' $CFG)
NAMESPACE=$(yq '.app.namespace' $CFG)
helm upgrade --install $RELEASE oci://registry.example.com/vendor/app --version 1.0.0 -n $NAMESPACE --create-namespace
`})
	spec := string(res.Spec)
	if !strings.Contains(spec, "      release: m5s\n      namespace: mach5\n") || strings.Contains(spec, "secret: true") {
		t.Errorf("spec:\n%s", spec)
	}
}

// Mach5's eksctl.sh: `aws ecr get-login-password | helm registry login
// --password-stdin`: the token the run makes is a required secret
// variable, given as the command's output when khook runs.
func TestRegistryLoginFromACommand(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
aws ecr get-login-password --region us-east-1 | helm registry login --username AWS --password-stdin 709825985650.dkr.ecr.us-east-1.amazonaws.com
helm upgrade --install m5 oci://709825985650.dkr.ecr.us-east-1.amazonaws.com/mach5/search --version 1.0.0 -n m5
`})
	spec := string(res.Spec)
	for _, want := range []string{
		"      auth:\n        username: AWS\n        password: ${REGISTRY_DKR_ECR_US_EAST_1_AMAZONAWS_PASSWORD}\n",
		"REGISTRY_DKR_ECR_US_EAST_1_AMAZONAWS_PASSWORD: {type: string, secret: true, required: true",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in:\n%s", want, spec)
		}
	}
	if len(infoLines(res.Model, "KHOOK_SECRET_REGISTRY_DKR_ECR_US_EAST_1_AMAZONAWS_PASSWORD=$(aws ecr get-login-password --region us-east-1)")) != 1 {
		t.Errorf("warnings: %v", res.Model.Info)
	}
}
