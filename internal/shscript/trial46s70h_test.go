package shscript

import "testing"

// What held-out trial 46s70e showed, each cut down.
func TestTrial46s70eExistenceIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// D1, matthewsalla/skooter-infra's longhorn-automation.sh restore APP_ID, run per volume:
		// each call reads its own backup id, so each its own variable
		{name: "a value a function computes per call", script: "restore() { local id=none; if [ -s \"ids/$1.txt\" ]; then id=$(<\"ids/$1.txt\"); fi\n  cat > \"vals-$1.yaml\" <<EOT\n$1: {backup: \"$id\"}\nEOT\n}\nrestore a\nrestore b\nhelm upgrade --install r oci://e.com/app --version 1.0.0 -n demo -f vals-a.yaml -f vals-b.yaml\n",
			want: []string{"backup: ${id}\n", "backup: ${id_2}\n", "install.sh:3, for $1=a (", "install.sh:3, for $1=b ("}},
		// the same through a script run twice, its file from a variable the run's argument sets
		{name: "a value a script run computes per run", script: "bash r.sh a\nbash r.sh b\nhelm upgrade --install r oci://e.com/app --version 1.0.0 -n demo -f v-a.yaml -f v-b.yaml\n",
			files: map[string]string{"r.sh": "#!/bin/bash\nset -e\nF=\"ids/$1.txt\"\nid=$(<\"$F\")\ncat > \"v-$1.yaml\" <<EOT\n$1: {backup: \"$id\"}\nEOT\n"},
			want:  []string{"backup: ${id}\n", "backup: ${id_2}\n", "for F=ids/b.txt ("}},
		// a secret read per call is a secret per call
		{name: "a secret a function reads per call", script: "mk() { PW=$(cat \"pw/$1.txt\"); kubectl create secret generic \"$1\" -n demo --from-literal=password=\"$PW\"; }\nmk a\nmk b\n",
			want: []string{"password: ${PW | toJson}", "password: ${PW_2 | toJson}", "(install.sh:3, for $1=b)"}},
		// a value computed alike on each call stays one variable
		{name: "a value a function computes alike per call", script: "mk() { id=$(cat ids.txt); kubectl create configmap \"c-$1\" -n demo --from-literal=id=\"$id\"; }\nmk a\nmk b\n",
			want: []string{"id: ${id | toJson}"}, never: []string{"id_2", ", for $1"}},
		// D2, drenlia/easy-kanban's deploy-pg.sh: a value read from the object where the check finds it
		// is no variable of the spec: said as what the step has, never "give it"
		{name: "a plain value set per path of an existence check", script: "if kubectl get configmap cfg -n demo &>/dev/null; then\n  SEEN=$(kubectl get configmap cfg -n demo -o jsonpath='{.data.x}')\nelse\n  SEEN=fresh\nfi\nkubectl create configmap other -n demo --from-literal=x=\"$SEEN\"\n",
			want: []string{"its steps have SEEN as that path sets it", "edit those steps by hand"}, never: []string{"give it that value"}},
		// a flag the check sets that a later test reads, a when: on a variable of the spec: still "give it"
		// (regression over 46s67h's kcindia uninstall.sh:39/:101 SKIP_ISTIO, left unsaid)
		{name: "a flag an existence check sets, read by a later test", script: "if [ \"$1\" == azure ]; then\n  if ! kubectl get crd gateways.networking.istio.io &>/dev/null; then\n    SKIP=true\n  else\n    SKIP=false\n  fi\nfi\nif [ \"$1\" == azure ] && [ \"$SKIP\" = false ]; then\n  kubectl delete -f gw.yaml --ignore-not-found\nfi\nkubectl create namespace x\n",
			files: map[string]string{"gw.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gw, namespace: x}\n"},
			want:  []string{"SKIP as that path sets it; where it finds the object the script reuses what it reads there instead, so give it that value"}},
		// variables only the found path reads are not named at all
		{name: "variables only the found path of an existence check reads", script: "if kubectl get configmap cfg -n demo &>/dev/null; then\n  CUR=$(kubectl get configmap cfg -n demo -o jsonpath='{.data.x}')\n  echo \"$CUR\"\nfi\nkubectl create configmap other -n demo --from-literal=x=y\n",
			want: []string{"name: other"}, never: []string{"CUR", "fresh cluster's path"}},
		// the shared Ingress the found path adds to, the fresh path's step puts back each run
		{name: "an object the found path changes in place, the fresh path's step makes", script: "N=shared\nif kubectl get ingress \"$N\" -n demo &>/dev/null; then\n  CUR=$(kubectl get ingress \"$N\" -n demo -o json)\n  UPD=$(echo \"$CUR\" | jq '.spec.rules += [{\"host\": \"b.example.com\"}]')\n  echo \"$UPD\" | kubectl apply -f -\nelse\n  cat <<EOT | kubectl apply -f -\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: $N\n  namespace: demo\nspec:\n  rules:\n  - host: b.example.com\nEOT\nfi\n",
			want:       []string{"where this finds shared the script changes it in place (install.sh:7, not carried)", "dropping what earlier runs added to it"},
			never:      []string{"give them that value", "CUR, UPD"},
			notCarried: []string{"the manifests it reads are $UPD"}},
		// N3, skooter-infra's longhorn-automation.sh: a script run whose lines name no command
		{name: "a script run that works on the machine, no command named", script: "bash r.sh a\nkubectl create namespace x\n",
			files:      map[string]string{"r.sh": "#!/bin/bash\nset -e\nif ! r=$(curl -s https://x/$1); then exit 1; fi\nif ! q=$(curl -s https://y/$1); then exit 1; fi\n"},
			want:       []string{"name: namespace-x"},
			never:      []string{"what it does ()"},
			notCarried: []string{"it runs r.sh, in which no helm or kubectl command changes the cluster: what it does works on the machine"}},
		// D3, drenlia/easy-kanban's deploy-pg.sh: create-if-missing of the namespace from its file
		{name: "if ! kubectl get namespace X; then kubectl apply -f FILE of X", script: "if ! kubectl get namespace demo &>/dev/null; then\n  kubectl apply -f ns.yaml\nfi\n",
			files: map[string]string{"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n"},
			want:  []string{"file: ./ns.yaml"}, never: []string{"does not make"}},
		// the warning stays where the file holds another object
		{name: "if ! kubectl get namespace X; then kubectl apply -f FILE of another", script: "if ! kubectl get namespace demo &>/dev/null; then\n  kubectl apply -f cm.yaml\nfi\n",
			files: map[string]string{"cm.yaml": configMap},
			want:  []string{"file: ./cm.yaml", "only where this finds no demo, which that step does not make"}},
	})
}
