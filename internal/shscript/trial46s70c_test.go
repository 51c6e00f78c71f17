package shscript

import "testing"

// What held-out trials 46s69q, 46s69r and 46s69t showed, each cut down.
func TestTrial46s70cIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// kobbikobb/guessthename's k8s/deploy.sh: two seds chained after cat (trial 46s69r's D1)
		{name: "cat FILE | sed … | sed … | kubectl apply -f-", script: "TAG=v1\nREG=example.io\ncat app.yaml | sed \"s/{{TAG}}/$TAG/g\" | sed \"s/{{REG}}/$REG/g\" | kubectl apply -n x -f-\nsed s/{{TAG}}/v2/ app.yaml | sed -E 's/(\\{\\{)REG}}/r2/' | kubectl apply -n y -f -\n",
			files: map[string]string{"app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  tag: \"{{TAG}}\"\n  reg: \"{{REG}}\"\n"},
			want:  []string{"tag: \"v1\"\n", "reg: \"example.io\"\n", "tag: \"v2\"\n", "reg: \"r2\"\n"}, never: []string{"{{"}},
	})
}
