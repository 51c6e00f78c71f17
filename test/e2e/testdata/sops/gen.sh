#!/bin/sh
# Regenerates the encrypted fixtures with the real sops CLI, built from the
# version go.mod pins:
#
#   go build -o /tmp/sops github.com/getsops/sops/v3/cmd/sops   # in a module requiring it
#   SOPS=/tmp/sops ./gen.sh
#
# The plaintexts are here and in sops_test.go (the test looks for them in
# khook's output); the key is TEST-ONLY-age.key.
set -eu
cd "$(dirname "$0")"
SOPS=${SOPS:-sops}
enc() { # enc NAME: stdin → NAME, encrypted by .sops.yaml's rule for NAME
	"$SOPS" encrypt --filename-override "$1" --input-type yaml --output-type yaml /dev/stdin >"$1"
}
enc values.enc.yaml <<'Y'
greeting: Values-S3cret-9f2b
Y
enc values-changed.enc.yaml <<'Y'
greeting: Values-S3cret-CHANGED-41d
Y
enc secret.enc.yaml <<'Y'
apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
  labels: {app: e2e-sops}
type: Opaque
stringData:
  password: Db-Passw0rd-7c1e
Y
enc deployment.enc.yaml <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: encrypted-whole
spec:
  replicas: 2
  selector: {matchLabels: {app: encrypted-whole}}
  template:
    metadata: {labels: {app: encrypted-whole}}
    spec:
      containers: [{name: app, image: nginx:1.27}]
Y
