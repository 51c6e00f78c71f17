package shscript

import "testing"

// What held-out trial 46s68f showed, each cut down.
func TestTrial46s68fIdioms(t *testing.T) {
	copyCM := "kubectl -n default get configmap global -o yaml | sed \"s/namespace: default/namespace: ida/g\" | kubectl -n ida create -f -\n"
	checkIdioms(t, []idiom{
		// mosip's and openg2p's utils/copy_cm_func.sh: a copy into another namespace is no edit to patch (D2)
		{name: "kubectl get -o yaml | sed namespace | kubectl -n OTHER create -f -", script: copyCM + "kubectl create namespace x\n",
			notCarried: []string{"copies the live object into namespace ida, where it does not exist yet, and khook does not copy a live object between namespaces: apply the object from its source", "it reads what kubectl -n default get configmap global -o yaml prints"}},
		// an edit applied back in its own namespace is still a patch's
		{name: "kubectl get -o yaml | sed | kubectl apply -f - in one namespace", script: "kubectl -n kube-system get cm kube-proxy -o yaml | sed -e 's/strictARP: false/strictARP: true/' | kubectl apply -f - -n kube-system\nkubectl create namespace x\n",
			notCarried: []string{"write the change as a patch: step", "it reads what"}},
	})
}
