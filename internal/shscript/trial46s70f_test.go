package shscript

import "testing"

// What held-out trials 46s70f and 46s70h (run once, on 00381bc) showed,
// each cut down.
func TestTrial46s70fIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// serbangilvitu/wikijs-demo's k8s-setup.sh: a secret with a literal default is required, the literal never written
		{name: "if [[ -z $SECRET ]]; then SECRET=literal; fi", script: "if [[ -z \"${DB_PASSWORD}\" ]]; then\n  DB_PASSWORD=\"dflt-46s70f\"\nfi\nkubectl create secret generic pg -n x --from-literal=password=${DB_PASSWORD}\n",
			want:  []string{"DB_PASSWORD: {type: string, secret: true, required: true", "a default of its own (install.sh:3), which the spec does not copy"},
			never: []string{"dflt-46s70f", "when:", "it is empty"}},
		// mosip/inji-web's install.sh: $? of X=$(nslookup …) is nslookup's, a check the script stops on, even by exit 0
		{name: "X=$(nslookup …); if [ $? -gt 0 ]; then exit 0; fi", script: "read -p \"host: \" HOST\nCHK=$( nslookup \"$HOST\" )\nif [ $? -gt 0 ]; then\n  echo \"no host\"; exit 0\nfi\nkubectl create namespace web\n",
			want: []string{"name: namespace-web"}, notCarried: []string{"a check the script stops on when it fails"}},
		{name: "X=$(curl …); [ $? -ne 0 ] && exit 1", script: "CHK=$(curl -fs https://e.com/health)\n[ $? -ne 0 ] && exit 1\nkubectl create namespace web\n",
			want: []string{"name: namespace-web"}, notCarried: []string{"a check the script stops on when it fails"}},
		{name: "if ! nslookup …; then exit 0; fi", script: "if ! nslookup \"$HOST\"; then exit 0; fi\nkubectl create namespace web\n",
			want: []string{"name: namespace-web"}, notCarried: []string{"a check the script stops on when it fails"}},
		// $? of a command that checks nothing outside stops nothing khook should name
		{name: "echo; [ $? -ne 0 ] && exit 1", script: "echo start\n[ $? -ne 0 ] && exit 1\nkubectl create namespace web\n",
			want: []string{"name: namespace-web"}},
		// wikijs-demo's k8s-setup.sh: a kubectl get held in a variable, run in a poll loop, is counted with the loop named
		{name: "CMD=\"kubectl get …\"; while [[ $(${CMD} | grep -c true) -lt 1 ]]", script: "helm upgrade -i pg oci://e.com/postgresql -n db\nCMD=\"kubectl get pod pg-0 -n db -o jsonpath='{.status.containerStatuses[0].ready}'\"\nwhile [[ $(${CMD} | grep -c true) -lt 1 ]]; do sleep 5; done\n",
			want: []string{"helm/kubectl commands: 2, of which 1 became steps", "wait: true"}, notCarried: []string{"a loop that polls the cluster until what it reads changes"}},
		{name: "X=$($CMD | grep …), CMD a kubectl get", script: "CMD=\"kubectl get pod pg-0 -n db\"\nX=$($CMD | grep -c Running)\nkubectl create namespace web\n",
			want: []string{"helm/kubectl commands: 2, of which 1 became steps, 0 were folded into steps, 1 are read-only"}},
	})
}
