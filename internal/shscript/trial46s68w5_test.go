package shscript

import "testing"

// What held-out trial 46s68i showed, each cut down.
func TestTrial46s68w5Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// Andrewed95/Messenger's deploy-all.sh:708 (D5): the loop gives up after 60s
		{name: "a poll loop with a counted give-up", script: "waited=0\nwhile ! kubectl get crd servicemonitors.monitoring.coreos.com; do\n  if [[ $waited -ge 60 ]]; then exit 1; fi; sleep 5; waited=$((waited + 5)); done\n",
			want: []string{"condition=Established", "timeout: 1m\n"}},
		{name: "a poll loop counted before its give-up", script: "f() {\n  local n=0 max=10\n  until kubectl get crd a.b.io; do\n    ((n++)); [[ $n -gt $max ]] && return 1; sleep 3; done\n}\nf\n",
			want: []string{"timeout: 30s\n"}},
		{name: "a poll loop with a give-up khook cannot count", script: "waited=0\nwhile ! kubectl get crd a.b.io; do\n  [[ $waited -ge $MAX ]] && exit 1; sleep 5; ((waited+=5)); done\n",
			want: []string{"the step waits khook's default timeout, 5m: write the script's time as its timeout:"}},
		// the same script's run_kubectl, run_helm, apply_manifest (D1): output only printed or logged
		{name: "a logging wrapper that captures the output only to print it", script: "log() { echo \"[x] $*\"; }\nrun_kubectl() {\n  local output exit_code\n  set +e\n  output=$(kubectl \"$@\" 2>&1)\n  exit_code=$?\n  set -e\n  if [[ $exit_code -ne 0 ]]; then\n    echo \"$output\" | while IFS= read -r line; do log \"  $line\"; done\n    return $exit_code\n  fi\n  if [[ -n \"$output\" ]]; then echo \"$output\"; fi\n}\nrun_helm() { local out; out=$(helm \"$@\" 2>&1) || { echo \"failed: $out\"; return 1; }; log \"$out\"; }\nrun_kubectl create namespace demo\nhelm repo add jetstack https://charts.jetstack.io\nrun_helm upgrade --install cert-manager jetstack/cert-manager -n cert-manager\n",
			want: []string{"name: namespace-demo", "repo: https://charts.jetstack.io", "release: cert-manager"}},
		{name: "a wrapper whose output goes to a file is still not carried", script: "keep() { local out; out=$(kubectl apply -f \"$1\" 2>&1); echo \"$out\" > applied.txt; }\nkubectl create namespace demo\nkeep https://example.com/k.yaml\n",
			notCarried: []string{"inside $(…) to take its output"}},
		// D2: a wrapper under a phase function under main names the call that gives it its words
		{name: "a nested wrapper's note names its call with its words", script: "keep() { local out; out=$(kubectl apply -f \"$1\" 2>&1); echo \"$out\" > applied.txt; }\nphase1() {\n  keep https://example.com/a.yaml\n  keep https://example.com/b.yaml\n}\nmain() { phase1; }\nkubectl create namespace demo\nmain\n",
			notCarried: []string{"called at install.sh:5 as `keep https://example.com/a.yaml`, through main called at install.sh:10)", "called at install.sh:6 as `keep https://example.com/b.yaml`, through main called at install.sh:10)"}},
		// D4: a repo add whose install, through a wrapper, is not carried
		{name: "a repo add whose install through helm \"$@\" is not carried", script: "run_helm() { local out; out=$(helm \"$@\" 2>&1); echo \"$out\" > helm.log; }\nhelm repo add jetstack https://charts.jetstack.io\nrun_helm upgrade --install cert-manager jetstack/cert-manager -n cert-manager\nkubectl create namespace demo\n",
			notCarried: []string{"inside $(…) to take its output", "write its URL https://charts.jetstack.io in repo:"}},
		// the same script's :619-647 (D3): a check sets a flag, an if on the flag decides an apply
		{name: "an if on a flag an existence check set", script: "missing=false\nif ! kubectl get secret tls -n app; then missing=true; fi\nkubectl create namespace demo\nif [[ $missing == true ]]; then echo \"create secret tls first\"; else kubectl apply -f https://example.com/proxy.yaml; fi\n",
			want:       []string{"name: namespace-demo"},
			notCarried: []string{"what the script does where kubectl get secret tls -n app (install.sh:4) finds the object, as [[ $missing == true ]] decides from it"}},
	})
}
