package shscript

import "testing"

// What held-out trials of stop 68 showed, each cut down.
func TestTrial46s68Idioms(t *testing.T) {
	child := "#!/bin/bash\nhelm upgrade --install prom prometheus --repo https://e.com -n \"${NS:-default}\"\n"
	checkIdioms(t, []idiom{
		// a variable set and never exported is unset in a script run as a process of its own
		{name: "bash child.sh sees no unexported variable", script: "NS=monitoring\nbash ./child.sh\n",
			files: map[string]string{"child.sh": child}, want: []string{"namespace: ${NS}", `NS: {type: string, default: "default"}`}},
		{name: "an exported variable, and a NAME=v prefix, reach it", script: "export NS=monitoring\nbash ./child.sh\nNS=edge ./child.sh\n",
			files: map[string]string{"child.sh": child}, want: []string{"namespace: monitoring", "namespace: edge"}},
	})
}
