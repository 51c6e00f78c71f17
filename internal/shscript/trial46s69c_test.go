package shscript

import "testing"

// What held-out trial 46s69c (run once, on 9e31628) showed, each cut down.
func TestTrial46s69cIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// clusterforge's n8n-install.sh: a secret envsubst reads from the environment, never set
		{name: "a secret envsubst reads from the environment is required", script: "envsubst < cm.yaml.template > cm.yaml\nkubectl apply -f cm.yaml -n app\n",
			files: map[string]string{"cm.yaml.template": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  DB_PASSWORD: \"${DB_PASSWORD}\"\n"},
			want:  []string{"DB_PASSWORD: {type: string, secret: true, required: true"}},
	})
}
