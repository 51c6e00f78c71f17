package shscript

import "testing"

// What held-out trial 46s69l showed, each cut down.
func TestTrial46s69lIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// nord-juice-shop's manage-multijuicer.sh:275 (D7): --version"$V" without a space
		{name: "a flag glued to its value", script: "V=${V:-45.21.0}\nhelm upgrade --install mon kube-prometheus-stack --repo https://e.com/charts -n mon --version\"$V\"\n",
			notCarried: []string{"helm rejects it as an unknown flag (a space is missing after --version)"}},
		// wrongsecrets-ctf-party's build-and-deploy-gcp.sh:125 (D5): --set="k=$(openssl rand …)"
		{name: "--set= then a quoted key=$(…)", script: "helm upgrade --install ctfd -n ctfd oci://e.com/ctfd --set=\"redis.auth.password=$(openssl rand -base64 24 | base64)\"\n",
			want: []string{"password: ${AUTH_PASSWORD}", "AUTH_PASSWORD: {type: string, secret: true, required: true"}},
		// nord-juice-shop's manage-multijuicer.sh:199 (D3): inside double quotes ${X:-''} is ''
		{name: "${X:-''} inside double quotes", script: "helm upgrade --install web oci://e.com/web -n web --set a.dns=\"${DNS_NAME:-''}\" --set b=${B:-''}\n",
			want: []string{`DNS_NAME: {type: string, default: "''"}`, `B: {type: string, default: ""}`}},
		// capturethecamp's launch.sh:5-8 (D6): summon only adds a secrets file's variables
		{name: "summon -f F kubectl/helm", script: "summon -f ../secrets.yml kubectl create namespace ctf\nsummon -p keyring.py --yaml 'A: !var a' helm install -n ctf web oci://e.com/web\n",
			want: []string{"helm/kubectl commands: 2, of which 2 became steps", "name: namespace-ctf", "release: web", "run khook under summon (summon -f ../secrets.yml khook …)"}},
		// wrongsecrets-ctf-party's build-and-deploy-gcp.sh:82-84 (D4): a password uuidgen makes when unset
		{name: "uuidgen when unset", script: "if [[ -z $APP_PASSWORD ]]; then\n  APP_PASSWORD=\"$( uuidgen | sed 's/[-]//g')\"\nfi\nhelm upgrade --install app oci://e.com/app -n app --set=\"env.PW=${APP_PASSWORD}\"\n",
			want:  []string{"APP_PASSWORD: {type: string, secret: true, required: true, description: \"a secret the script generates when it is unset", "PW: ${APP_PASSWORD}"},
			never: []string{"it is empty"}},
		// nord-juice-shop's manage-multijuicer.sh:71, :121-123 (D2): a -z test that guards no use,
		// then a password given or made: required, as its sibling
		{name: "a -z test, then ${X:-$(gen)}", script: "randstr() { dd bs=512 if=/dev/urandom count=1 2>/dev/null | tr -dc a-z | head -c 24; }\nif [ -z \"${REDIS_PASS:-}\" ]; then FRESH=1; fi\nREDIS_PASS=\"${REDIS_PASS:-$(randstr)}\"\nREPL_PASS=\"${REPL_PASS:-$(randstr)}\"\nhelm upgrade --install r oci://e.com/redis -n db --set auth.password=\"$REDIS_PASS\" --set repl.password=\"$REPL_PASS\"\n",
			want: []string{"REDIS_PASS: {type: string, secret: true, required: true", "REPL_PASS: {type: string, secret: true, required: true"}},
		// nord-juice-shop's manage-multijuicer.sh:29, :365 (D1): a numeric test on a variable with a default
		{name: "[ \"$X\" -eq 1 ] with X=${X:-0}", script: "MONITORING=${MONITORING:-0}\nif [ \"$MONITORING\" -eq 1 ]; then\n  helm upgrade --install mon oci://e.com/mon -n apps\nfi\nif [[ $MONITORING -gt 0 ]]; then kubectl create namespace mon; fi\n",
			want: []string{`MONITORING: {type: string, default: "0"}`, `when: int(vars.get("MONITORING", "0")) == 1`, `when: int(vars.get("MONITORING", "0")) > 0`}},
	})
}
