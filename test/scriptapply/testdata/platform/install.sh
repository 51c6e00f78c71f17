#!/usr/bin/env bash
# Written for khook's tests (test/scriptapply), in the shape of a team's
# platform bootstrap: a chart from its HTTP chart repository (the test's,
# at HTTP_REPO_URL), objects from literals and a heredoc, a label set after.
set -euo pipefail

NAMESPACE="${NAMESPACE:-platform}"

helm repo add team HTTP_REPO_URL
helm repo update

kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f -
kubectl create configmap platform-settings -n "$NAMESPACE" \
  --from-literal=region=eu-west-1 --from-literal=tier=gold \
  --dry-run=client -o yaml | kubectl apply -f -

kubectl apply -f - <<EOF2
apiVersion: v1
kind: ServiceAccount
metadata:
  name: deployer
  namespace: ${NAMESPACE}
  labels:
    team: platform
EOF2

helm upgrade --install web team/demo --version 0.1.0 -n "$NAMESPACE" \
  --set message="hello from the platform" --set replicaCount=1 --wait --timeout 2m

kubectl label namespace "$NAMESPACE" team=platform --overwrite
