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
	})
}
