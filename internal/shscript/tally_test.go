package shscript

import (
	"fmt"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// corpusScripts are the real scripts of test/testdata/scripts (SOURCES.md).
var corpusScripts = [][2]string{
	{"kube-prometheus", "scripts/monitoring-deploy.sh"},
	{"gloo", "projects/gateway2/install.sh"},
	{"immudb", "K8s-deployment/Charts/immudb/install.sh"},
	{"bakito-jti", "testdata/e2e/installChart.sh"},
	{"fairwinds", "stable/insights-admission/ci/pre-test-script.sh"},
	{"fairwinds", "scripts/fleet-install-test.sh"},
	{"kserve", "hack/setup/infra/manage.cert-manager-helm.sh"},
	{"kserve", "hack/setup/infra/manage.istio-helm.sh"},
	{"kserve", "hack/setup/infra/manage.keda-helm.sh"},
	{"kserve", "hack/self-signed-ca.sh"},
	{"ingress-nginx", "build/dev-env.sh"},
	{"kubeflow", "tests/pipelines_install.sh"},
	{"kubeflow", "tests/kserve_install.sh"},
	{"kubeflow", "tests/knative_install.sh"},
	{"kubeflow", "tests/metrics-server_install.sh"},
	{"kubeflow", "tests/cert_manager_install.sh"},
	{"kubeflow", "tests/istio-cni_install.sh"},
	{"kubeflow", "tests/spark_install.sh"},
	{"kubeflow", "tests/trainer_install.sh"},
	{"kubeflow", "tests/oauth2-proxy_install.sh"},
}

// TestCorpusTally counts, over the corpus, the helm/kubectl commands the
// import accounted for and their fates (the acceptance: ≥ 75 %
// of those that are not read-only carried as steps); -v prints the table.
func TestCorpusTally(t *testing.T) {
	total := map[importer.Fate]int{}
	var b strings.Builder
	for _, c := range corpusScripts {
		res, _ := load(t, c[0], c[1])
		n := res.Model.Counts()
		all := 0
		for f, k := range n {
			total[f] += k
			all += k
		}
		fmt.Fprintf(&b, "%-15s %-48s %3d commands: %3d step %3d folded %3d read-only %3d not carried\n", c[0], c[1], all,
			n[importer.FateStep], n[importer.FateFolded], n[importer.FateReadOnly], n[importer.FateNotCarried])
	}
	all := 0
	for _, k := range total {
		all += k
	}
	carried := total[importer.FateStep] + total[importer.FateFolded]
	fmt.Fprintf(&b, "total %d commands: %d step, %d folded, %d read-only, %d not carried; carried (step+folded) %.0f %%, as steps %.0f %%",
		all, total[importer.FateStep], total[importer.FateFolded], total[importer.FateReadOnly], total[importer.FateNotCarried],
		100*float64(carried)/float64(all), 100*float64(total[importer.FateStep])/float64(all))
	t.Log("\n" + b.String())
	// Read-only commands (a $(kubectl get …) the script reads a value
	// from) change nothing: the share is of the commands that do.
	if changing := all - total[importer.FateReadOnly]; 4*total[importer.FateStep] < 3*changing {
		t.Errorf("fewer than 75 %% of the corpus's commands that change the cluster became steps")
	}
}

// TestImportIsTheSameEachRun imports each corpus script, and values with
// several credentials (trial 46zj's giteasec, whose secret variables came
// out in map order), a few times: the spec and what is said are the same
// bytes each run, so a re-import shows only what changed.
func TestImportIsTheSameEachRun(t *testing.T) {
	once := func(c [2]string) string {
		res, _ := load(t, c[0], c[1])
		return string(res.Spec) + fmt.Sprint(res.Model.Info, res.Model.NotCarried)
	}
	for _, c := range corpusScripts {
		first := once(c)
		for range 3 {
			if once(c) != first {
				t.Errorf("%s %s: a second import differs from the first", c[0], c[1])
				break
			}
		}
	}
	files := map[string]string{"install.sh": "#!/bin/bash\nset -e\nhelm upgrade --install git oci://r.example/gitea --version 1.0.0 -n git -f - <<EOF\ngitea:\n  admin: {password: s3cret-a, username: root}\n  config:\n    metrics: {TOKEN: s3cret-b}\n    security: {SECRET_KEY: s3cret-c, INTERNAL_TOKEN: s3cret-d}\n  mailer: {PASSWD: s3cret-e}\nEOF\n"}
	first := string(importScript(t, files).Spec)
	for range 8 {
		if string(importScript(t, files).Spec) != first {
			t.Fatalf("the values' secret variables come out in another order")
		}
	}
}

// A function that writes a file, called twice: once for a file an apply
// reads, once for one nothing reads (trial 46zu's tgnemonik). Its line is
// said the same way each run: not at all, since a step reads what it writes.
func TestWriteLineReadOnceIsSaidTheSameEachRun(t *testing.T) {
	files := map[string]string{"a.tmpl": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", "b.tmpl": "x: 1\n", "install.sh": "#!/bin/bash\nset -e\nrender() {\n  envsubst < $1 > $2\n}\nrender a.tmpl a.yaml\nrender b.tmpl b.yaml\nkubectl apply -n x -f a.yaml\n"}
	first := importScript(t, files)
	for range 8 {
		if res := importScript(t, files); string(res.Spec) != string(first.Spec) || len(res.Model.NotCarried) != len(first.Model.NotCarried) {
			t.Fatalf("another run says %v, the first %v", res.Model.NotCarried, first.Model.NotCarried)
		}
	}
}
