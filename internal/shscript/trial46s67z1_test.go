package shscript

import "testing"

// What held-out trial 46s67l showed, each cut down.
func TestTrial46s67z1Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// chandl/kubes' create-media.sh: k3s's bundled kubectl is kubectl (D1)
		{name: "sudo k3s kubectl", script: "NS=media\nsudo k3s kubectl create namespace $NS\nsudo k3s kubectl apply -f m.yaml -n $NS\nsudo k3s kubectl get pods -n $NS\n",
			files: map[string]string{"m.yaml": configMap},
			want: []string{"helm/kubectl commands: 3, of which 2 became steps", "name: namespace-media", "file: ./m.yaml",
				"k3s kubectl: khook runs its own kubectl against the cluster it is given"}},
		{name: "microk8s kubectl, microk8s.kubectl, minikube kubectl --", script: "microk8s kubectl create namespace a\nmicrok8s.kubectl create namespace b\nminikube kubectl -- create namespace c\n",
			want: []string{"helm/kubectl commands: 3, of which 3 became steps", "name: namespace-a", "name: namespace-b", "name: namespace-c", "microk8s kubectl: khook runs its own kubectl"}},
	})
}

// khteh/kubernetes' restart_beacon.sh: a secret only the environment gives
// is required, as any variable never set is (D3); a test of it keeps it optional.
func TestTrial46s67z1EnvironmentSecretIsRequired(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "never set", script: "kubectl create secret generic jwtsecret --from-literal=jwtsecret=$jwtsecret -n x\n",
			want: []string{"jwtsecret: {type: string, secret: true, required: true"}},
		{name: "tested", script: "if [ -n \"$GITHUB_TOKEN\" ]; then\n  kubectl create secret generic gh --from-literal=token=\"$GITHUB_TOKEN\" -n x\nfi\n",
			want: []string{"GITHUB_TOKEN: {type: string, secret: true, description"}},
	})
}

// acardoco/khazadlab's deploy_valheim.sh: envsubst sees only exported
// variables, so a .env sourced without export gives it nothing (D4).
func TestTrial46s67z1EnvsubstSeesOnlyExported(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d4\n  namespace: x\ndata:\n  name: \"${NAME}\"\n"
	checkIdioms(t, []idiom{
		{name: "source .env", script: "source .env\nenvsubst < cm.yaml | kubectl apply -f -\n",
			files: map[string]string{".env": "NAME=hello\n", "cm.yaml": cm},
			want:  []string{`name: ""`, "$NAME are set by the script but not exported, so envsubst sees them empty"}, never: []string{"hello"}},
		{name: "set -a", script: "set -a\nsource .env\nset +a\nenvsubst < cm.yaml | kubectl apply -f -\n",
			files: map[string]string{".env": "NAME=hello\n", "cm.yaml": cm}, want: []string{`name: "hello"`}},
		{name: "exported later", script: "NAME=hello\nexport NAME\nNAME=world\nenvsubst < cm.yaml | kubectl apply -f -\n",
			files: map[string]string{"cm.yaml": cm}, want: []string{`name: "world"`}},
		{name: "export NAME=", script: "export NAME=hello\nenvsubst < cm.yaml | kubectl apply -f -\n",
			files: map[string]string{"cm.yaml": cm}, want: []string{`name: "hello"`}},
	})
}

// vinsac/MyNodeOne's install-minecraft.sh and install-jellyfin.sh: a
// script run in an if's condition (behind sudo too) is followed, its
// commands named at their lines (D5).
func TestTrial46s67z1ScriptRunInACondition(t *testing.T) {
	dns := "#!/bin/bash\necho '10.0.0.5 app.local' | sudo tee -a /etc/hosts > /dev/null\n"
	checkIdioms(t, []idiom{
		{name: "if bash x.sh", script: "kubectl create namespace d5\nif bash ./dns.sh > /dev/null 2>&1; then echo ok; fi\n",
			files: map[string]string{"dns.sh": dns}, want: []string{"name: namespace-d5"},
			notCarried: []string{"it works on local files"}},
		{name: "if sudo bash x.sh", script: "kubectl create namespace d5\nif sudo bash ./dns.sh --quiet 2>/dev/null; then echo ok; fi\n",
			files: map[string]string{"dns.sh": dns}, want: []string{"name: namespace-d5"},
			notCarried: []string{"it works on local files"}},
		{name: "if ./x.sh with a step", script: "if ./mk.sh; then echo ok; fi\n",
			files: map[string]string{"mk.sh": "#!/bin/bash\nset -e\nkubectl create namespace made\n"}, want: []string{"name: namespace-made"}},
	})
}

// emortalmc's initAgones.sh and the trial's stand-ins: a --from-literal
// value with one variable in it goes through toJson, so a quote or a
// backslash in the value stays the value (D2).
func TestTrial46s67z1LiteralWithAVariable(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "secret and configmap", script: "kubectl create secret generic s -n x --from-literal=url=\"postgres://u:$DB_PASSWORD@h\"\nkubectl create configmap c -n x --from-literal=host=\"$HOST\" --from-literal=mix=\"pre-$HOST-\\\"q\" --from-literal=two=\"$HOST:$PORT\"\n",
			want: []string{`url: ${DB_PASSWORD | printf "postgres://u:%s@h" | toJson}`, "host: ${HOST | toJson}", `mix: ${HOST | printf "pre-%s-\"q" | toJson}`, `two: "${HOST}:${PORT}"`}},
	})
}
