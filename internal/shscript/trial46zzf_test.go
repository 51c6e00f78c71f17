package shscript

import (
	"strings"
	"testing"
)

// What held-out trials 46zzf, 46zzg and 46zzh (bootstrap scripts of
// repositories no script trial had read, run once on 059c4d1) showed, cut
// down.

// 46zzg D1: a poll whose timeout branch calls a function that scales back
// and exits (the break after the call never runs) is the wait it stands
// for; the scale-back is that failure path, named, not a step.
func TestPollTimeoutCallsFunctionThatExits(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
giveUp() {
  kubectl -n shop scale deployment/cart-blue --replicas=0
  exit 1
}
waitReady() {
  SECONDS=0
  while [[ "$(kubectl -n shop get deployment cart-blue -o jsonpath='{.status.readyReplicas}')" != "2" ]]; do
    if [ $SECONDS -gt 60 ]; then
      giveUp
      break
    fi
    sleep 2
  done
}
kubectl -n shop scale deployment/cart-blue --replicas=2
waitReady
kubectl -n shop patch service cart -p '{"spec":{"selector":{"color":"blue"}}}'
`})
	spec := string(res.Spec)
	if strings.Contains(spec, "replicas: 0") || !strings.Contains(spec, "jsonpath={.status.readyReplicas}=2") || fateAt(res.Model, 3) != "not carried" {
		t.Errorf("line 3 %q\n%s", fateAt(res.Model, 3), spec)
	}
}

// 46zzf D1: a password generated in a script the script runs, and another
// generated after it, are two values: two secret variables, each
// described at its own line.
func TestTwoGeneratedPasswordsAreTwoVariables(t *testing.T) {
	res := importScript(t, map[string]string{"gen.sh": "#!/bin/bash\nset -e\nPW=$(openssl rand -hex 16)\nkubectl -n a create secret generic a-admin --from-literal=password=\"$PW\"\n",
		"install.sh": "#!/bin/bash\nset -e\n./gen.sh\nPW=$(openssl rand -hex 16)\nkubectl -n b create secret generic b-admin --from-literal=password=\"$PW\"\n"})
	spec := string(res.Spec)
	if !strings.Contains(spec, `password: "${PW}"`) || !strings.Contains(spec, `password: "${PW_2}"`) || !strings.Contains(spec, "(install.sh:4)") {
		t.Errorf("spec:\n%s", spec)
	}
}

