package shscript

import "testing"

// What held-out trial 46s68n showed (fixer 46s68w7), cut down.
func TestTrial46s68w7Idioms(t *testing.T) {
	chart := map[string]string{"logstash/Chart.yaml": "apiVersion: v2\nname: logstash\nversion: 8.5.1\n"}
	checkIdioms(t, []idiom{
		// AnonyIIMessiah/3t-webapp-elk's elk-2-filebeat/up.sh (trial 46s68n's D1):
		// helm install of a release a step before it installed fails in bash
		{name: "helm install of a release installed before", script: "helm install my-logstash oci://e.com/logstash --version 8.5.1\nhelm install my-logstash ./logstash\nkubectl create namespace after\n",
			files: chart, want: []string{"chart: oci://e.com/logstash", "name: namespace-after"},
			notCarried: []string{"helm install refuses a release name in use, and step my-logstash (install.sh:3) installed release my-logstash in this namespace before: bash's helm fails here (cannot re-use a name that is still in use); khook does not carry it as an upgrade: to change the release, write helm upgrade --install in the script, else drop the line, and import again; under set -e that failure ends the script, so bash never runs the 1 helm/kubectl command(s) after it"}},
		{name: "helm install after upgrade --install, its failure tested", script: "helm upgrade --install web ./logstash -n a\nhelm install web ./logstash -n a || true\n",
			files: chart, notCarried: []string{"and the script goes on without it, the release as that step left it"}},
		// none of these fails in bash: another namespace, an uninstall or
		// a namespace delete between, an existence check, a retry loop,
		// branches on a variable, an upgrade
		{name: "helm install again where bash's helm finds no release", script: "helm install web ./logstash -n a\nhelm install web ./logstash -n b\nhelm uninstall web -n a\nhelm install web ./logstash -n a\nkubectl delete namespace b\nhelm install web ./logstash -n b --create-namespace\n" +
			"helm status web -n a || helm install web ./logstash -n a\nfor i in 1 2 3; do helm install r ./logstash -n c && break; sleep 5; done\n" +
			"if [ \"$X\" = 1 ]; then helm install w ./logstash; else helm install w ./logstash --set a=b; fi\nhelm upgrade --install web ./logstash -n a --set a=b\n",
			files: chart, want: []string{"name: web-4", "name: r\n", "name: w-2", "name: web-5"}, never: []string{"name: r-2", "name in use"}},
	})
}
