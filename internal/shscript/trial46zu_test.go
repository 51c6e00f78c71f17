package shscript

import (
	"strings"
	"testing"
)

// What held-out trial 46zu (helpdesk, CRM, project-management and wiki
// installers, run once on 2ce5bfb) showed, each cut down.

// D1 (BookStack): kubens NS sets the context's namespace: the steps after
// it that name none work in NS.
func TestKubensSetsTheNamespace(t *testing.T) {
	res := importScript(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n",
		"install.sh": "#!/bin/bash\nset -e\nkubectl create namespace books\nkubens books\nkubectl apply -f cm.yaml\n"})
	if spec := string(res.Spec); !strings.Contains(spec, "namespace: books\n") || len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, spec)
	}
}

// D2 (Chatwoot): [ -z "${KEY:-}" ] && KEY=$(openssl rand -hex 64) is a
// generated secret, required: one step, never an empty key.
func TestGeneratedWhenUnsetIsRequired(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/usr/bin/env bash\nset -euo pipefail\nif [ -z \"${SECRET_KEY_BASE:-}\" ]; then\n  SECRET_KEY_BASE=$(openssl rand -hex 64)\nfi\nkubectl create secret generic app -n chat --from-literal=SECRET_KEY_BASE=\"${SECRET_KEY_BASE}\"\n"})
	spec := string(res.Spec)
	if !strings.Contains(spec, "SECRET_KEY_BASE: {type: string, secret: true, required: true") || strings.Contains(spec, "when:") || len(res.Model.Steps) != 1 {
		t.Errorf("spec:\n%s", spec)
	}
}

// D3 (Taiga): kubectl run of a pod whose command never ends is a pod kept
// for exec, not a job; the wait and delete of that pod are not carried
// with it.
func TestEndlessRunIsNoJob(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl create namespace demo\nkubectl run helper --image=busybox -n demo --restart=Never --command -- /bin/sh -c \"while true; do sleep 30; done\"\nkubectl wait --for=condition=Ready pod/helper -n demo\nkubectl delete pod -n demo helper\n"})
	if fateAt(res.Model, 3) != "not carried" || fateAt(res.Model, 4) != "not carried" || fateAt(res.Model, 5) != "not carried" || len(res.Model.Steps) != 1 {
		t.Errorf("fates %q %q %q, %d steps", fateAt(res.Model, 3), fateAt(res.Model, 4), fateAt(res.Model, 5), len(res.Model.Steps))
	}
}
