package shscript

import "testing"

// What held-out trials 46s69c, i, m and n showed and fixer 46s70d fixed,
// each cut down.
func TestTrial46s70dIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// futuroptimist/sugarkube's flux-bootstrap.sh (46s69n D3): an elif
		// chain of existence checks patching one object or another: at
		// most one patch, each under its choice, never both always
		{name: "if get A; then patch A; elif get B; then patch B; fi", script: "kubectl create namespace flux-system\n" +
			"if kubectl -n flux-system get kustomization platform >/dev/null 2>&1; then\n  kubectl -n flux-system patch kustomization platform --type=merge -p '{\"spec\":{\"path\":\"./a\"}}'\n" +
			"elif kubectl -n flux-system get kustomization flux-system >/dev/null 2>&1; then\n  kubectl -n flux-system patch kustomization flux-system --type=merge -p '{\"spec\":{\"path\":\"./a\"}}'\nelse\n  echo none\nfi\n",
			want: []string{"when: vars.IF_PLATFORM == \"true\"\n", "when: '!(vars.IF_PLATFORM == \"true\") && vars.IF_FLUX_SYSTEM == \"true\"'", "IF_PLATFORM: {type: string, required: true"}},
	})
}
