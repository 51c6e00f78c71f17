package shscript

import "testing"

// What held-out trial 46s69c (run once, on 9e31628) showed, each cut down.
func TestTrial46s69cIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// clusterforge's n8n-install.sh: a secret envsubst reads from the environment, never set
		{name: "a secret envsubst reads from the environment is required", script: "envsubst < cm.yaml.template > cm.yaml\nkubectl apply -f cm.yaml -n app\n",
			files: map[string]string{"cm.yaml.template": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  DB_PASSWORD: \"${DB_PASSWORD}\"\n"},
			want:  []string{"DB_PASSWORD: {type: string, secret: true, required: true"}},
		// the same script: envsubst writing a Secret it cannot carry is no helm/kubectl command
		{name: "envsubst > FILE not counted as a helm/kubectl command", script: "kubectl create namespace app\nenvsubst < s.yaml.template > s.yaml\nkubectl apply -f s.yaml -n app\n",
			files:      map[string]string{"s.yaml.template": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  pw: \"${PW}\"\n"},
			want:       []string{"helm/kubectl commands: 2, of which 1 became steps, 0 were folded into steps, 0 are read-only, 1 not carried.", "Of the 2 lines not carried below, 1 are such commands and 1 are other commands"},
			notCarried: []string{"a Secret from a file", "made by the envsubst at install.sh:4"}},
	})
}
