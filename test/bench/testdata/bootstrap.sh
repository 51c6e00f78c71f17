#!/usr/bin/env bash
# The bootstrap as a helm + kubectl script: what khook.yaml beside it does.
# Inputs (environment): HELM, KUBECTL, KUBECONFIG, REPO_URL, REPO_USER,
# REPO_PASS, NS, and JOB=false to leave the job out. Helm and kubectl get a
# private HOME from the caller.
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)

for chart in alpha beta gamma; do
  "$HELM" upgrade --install "$chart" "$chart" \
    --repo "$REPO_URL" --username "$REPO_USER" --password "$REPO_PASS" \
    --version 0.1.0 --namespace "$NS" --create-namespace --wait --timeout 2m
done

"$KUBECTL" apply --namespace "$NS" -f "$dir/manifests.yaml"

[ "${JOB:-true}" = true ] || exit 0

# A Job cannot be re-applied: delete the previous run's, then create it anew.
"$KUBECTL" delete job bootstrap --namespace "$NS" --ignore-not-found --wait=true
"$KUBECTL" create --namespace "$NS" -f "$dir/job.yaml"
"$KUBECTL" wait --namespace "$NS" --for=condition=complete job/bootstrap --timeout=2m
