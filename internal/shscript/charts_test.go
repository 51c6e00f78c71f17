package shscript

import "testing"

// A chart repository the script adds from git (helm-git's URL) is the
// steps' repo: as it is; without ref= the spec says ref=master, as
// helm-git reads it, and says so at the line.
func TestGitRepositoryIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "helm repo add of a git repository", script: "helm plugin install https://github.com/aslafy-z/helm-git --version 1.3.0\nhelm repo add lpp 'git+https://github.com/rancher/local-path-provisioner@deploy/chart?ref=v0.0.31'\nhelm upgrade --install lpp lpp/local-path-provisioner -n storage --create-namespace\n",
			want: []string{"chart: local-path-provisioner\n      repo: git+https://github.com/rancher/local-path-provisioner@deploy/chart?ref=v0.0.31\n", "dependencyUpdate: true"}},
		{name: "--repo of a git repository without a ref", script: "helm install api api --repo git+https://github.com/example/api@charts -n api\n",
			want: []string{"repo: git+https://github.com/example/api@charts?ref=master\n", "names no ref=, so helm-git reads branch master"}},
	})
}

// What trial 46w's f5-dpf hook does, as a script of its own.
func TestPulledChartCRDsIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// f5's apply-crds.sh, as a script: the chart's crds/ applied before
		// it is installed is a helm step's crds: upgrade
		{name: "a pulled chart's crds/ applied before its install", script: "TMP_DIR=$(mktemp -d)\nhelm pull oci://ghcr.io/org/charts/op --version 1.2.0 --untar -d \"$TMP_DIR\"\nkubectl apply --server-side -f \"$TMP_DIR/op/crds\"\nhelm upgrade --install op oci://ghcr.io/org/charts/op --version 1.2.0 -n op --create-namespace\n",
			want: []string{"crds: upgrade", "1 were folded"}},
		{name: "a pulled chart's crds/ applied, the chart never installed", script: "helm pull oci://ghcr.io/org/charts/op --version 1.2.0 --untar -d /tmp/x\nkubectl apply -f /tmp/x/op/crds\n",
			notCarried: []string{"the crds/ of chart oci://ghcr.io/org/charts/op, which no step installs"}},
	})
}
