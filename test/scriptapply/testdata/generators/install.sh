#!/usr/bin/env bash
# Written for khook's tests (test/scriptapply), in the shape of a
# tutorial's deploy script: kubectl's generators, no manifest at all.
set -euo pipefail

kubectl create namespace shop
kubectl create deployment web --image=nginx:1.25 --port=80 --replicas=2 -n shop
kubectl expose deployment web --port=8080 --target-port=80 -n shop
kubectl create deployment api --image=ghcr.io/acme/api:1 -n shop -- /api --listen :9000
kubectl expose deploy/api --port 9000 --name api-svc --labels tier=backend -n shop
kubectl create deployment pair --image=redis:7 --image=busybox:1.36 --port 6379 -n shop
kubectl expose deployment pair -n shop
kubectl run cache --image=redis:7 --port=6379 --expose --labels app=cache,tier=data -n shop
kubectl run worker --image=busybox:1.36 -n shop --env=MODE=batch --command -- sh -c 'echo ready'
