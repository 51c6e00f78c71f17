#!/usr/bin/env bash
# Written for khook's tests: every idiom docs/from-scripts.md lists.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(dirname "$SCRIPT_DIR")"
source "$SCRIPT_DIR/lib.sh"

ENVIRONMENT="${ENVIRONMENT:-dev}"
NAMESPACE="${NAMESPACE:-platform}"
CERT_MANAGER_VERSION=v1.14.4
TOKEN=$(cat "$REPO_ROOT/token.txt")
DB_PASSWORD="hunter2-literal"

kind create cluster --name khook

helm repo add jetstack https://charts.jetstack.io
helm repo update

kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f -

log "cert-manager"
install_chart cert-manager jetstack/cert-manager cert-manager \
  --version "$CERT_MANAGER_VERSION" \
  --set crds.enabled=true \
  --set-string podLabels.build=007 \
  --set 'extraArgs={--v=2,--enable-certificate-owner-ref}' \
  --set webhook.tolerations[0].key=infra \
  --wait --timeout 10m

until kubectl get crd certificates.cert-manager.io; do sleep 5; done

kubectl create secret generic api-token -n "$NAMESPACE" \
  --from-literal=token="$TOKEN" --from-literal=password=s3cr3t-value \
  --dry-run=client -o yaml | kubectl apply -f -

cd "$REPO_ROOT"
helm upgrade --install app ./charts/app -n "$NAMESPACE" \
  -f values/app.yaml \
  --set auth.password="$DB_PASSWORD" \
  --set image.tag=1.2.3 -f - <<EOF2
replicaCount: 2
EOF2

if [ "$ENVIRONMENT" = "prod" ]; then
  kubectl apply -f manifests/
fi

case "$ENVIRONMENT" in
  dev|test) kubectl scale deployment/app -n "$NAMESPACE" --replicas=1 ;;
  *) kubectl annotate deployment app -n "$NAMESPACE" tier=prod ;;
esac

kubectl wait --for=condition=available deployment/app -n "$NAMESPACE" --timeout=120s
kubectl rollout status deployment/app -n "$NAMESPACE" --timeout=5m
kubectl delete job migrate -n "$NAMESPACE" --ignore-not-found
kubectl get ns monitoring || kubectl create ns monitoring
envsubst < manifests/config.tmpl.yaml | kubectl apply -f -
kubectl get nodes
docker build -t app .
kubectl port-forward svc/app 8080:80
