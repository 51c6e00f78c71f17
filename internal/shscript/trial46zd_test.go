package shscript

import (
	"strings"
	"testing"
)

// Held-out trial 46zd (telecom, serverless, blockchain installers, run
// once on 9e23b2c): D6, the Fabric plugin's --secret/--enroll-secret
// passwords, and D7, a curl header's token, were quoted in the notes.
func TestCommandLineCredentialsNeverQuoted(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl hlf ca register --name=org1-ca --user=peer --secret=c4nary-hlf-peer-pw --type=peer --enroll-id enroll --enroll-secret=c4nary-hlf-enroll-pw --mspid Org1MSP
kubectl create namespace core
curl -X POST http://127.0.0.1:30050/api/subscriber -H "Token: c4nary-webconsole-token" -d @sub.json
curl -H "Authorization: Bearer c4nary-bearer-token" -u admin:c4nary-curl-pw https://api.example.com/x
kubectl wait --for=condition=Ready pod/x -n core --timeout=true-ish
`})
	var all []string
	for _, n := range append(res.Model.NotCarried, res.Model.Info...) {
		all = append(all, n.String())
	}
	text := strings.Join(all, "\n") + string(res.Spec)
	if strings.Contains(text, "c4nary") {
		t.Errorf("a credential is quoted:\n%s", text)
	}
}

// D4 (an srsRAN/Open5GS redeploy script): oc project X, as kubectl config
// set-context --current --namespace=X, is the namespace of the helm
// uninstalls after it.
func TestProjectNamespaceReachesUninstall(t *testing.T) {
	for _, sw := range []string{"oc project srs72", "kubectl config set-context --current --namespace=srs72"} {
		res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\n" + sw + "\nhelm uninstall open5gs\n"})
		if want := "      release: open5gs\n      namespace: srs72\n"; !strings.Contains(string(res.Spec), want) || fateAt(res.Model, 3) != "folded" {
			t.Errorf("%s: line 3 %s, spec:\n%s", sw, fateAt(res.Model, 3), res.Spec)
		}
	}
}

// D5 (a private Ethereum network): kubectl create configmap
// --from-file=DIR/ is a key per file of DIR, as kubectl makes it.
func TestConfigMapFromFolder(t *testing.T) {
	res := importScript(t, map[string]string{
		"genesis/genesis.json": "{\"config\":{}}\n",
		"genesis/networkid":    "1337\n",
		"genesis/sub/skip.txt": "not read\n",
		"install.sh":           "#!/bin/bash\nset -e\nkubectl create configmap eth-geth -n eth --from-file=genesis/\n",
	})
	spec := string(res.Spec)
	for _, want := range []string{"              genesis.json: |\n                {\"config\":{}}\n", "              networkid: |\n                1337\n"} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in:\n%s", want, spec)
		}
	}
	if strings.Contains(spec, "not read") {
		t.Errorf("a subfolder's file is read:\n%s", spec)
	}
}

// D1, D2, D8, D9: a helm plugin's command (helm spray) is said as one, and
// the helm dependency update of the chart it installs is read-only, not
// folded into a step that is not there; `helm install x x/` after a cd
// khook cannot follow is a local folder, not a repository chart; docker
// exec is no image to build; eval of a variable says so.
func TestPluginsFoldersAndWording(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
helm plugin install https://github.com/ThalesGroup/helm-spray || true
helm dependency update
helm --create-namespace --namespace=oai spray .
cd "$HOME"/charts
helm --namespace=oai install oai-gnb oai-gnb/
docker exec node1 ip link set up eth1
eval $SETUP
kubectl hlf ca create --storage-class=standard --capacity=2Gi --name=org1-ca
`})
	if got := fateAt(res.Model, 4); got != "read-only" {
		t.Errorf("helm dependency update: %s", got)
	}
	var all []string
	for _, n := range res.Model.NotCarried {
		all = append(all, n.String())
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		"install.sh:5: helm --create-namespace --namespace=oai spray .: helm spray is a helm plugin's command",
		"install.sh:8: docker exec node1 ip link set up eth1: khook runs no shell commands; it works on docker's containers",
		"the command is the value of ${SETUP}",
		"kubectl hlf is a kubectl plugin's command (kubectl-hlf)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	if !strings.Contains(string(res.Spec), "      chart: ./oai-gnb\n") {
		t.Errorf("oai-gnb/ is not a local chart:\n%s", res.Spec)
	}
}
