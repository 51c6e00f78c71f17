package spec_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

func ExampleLoad() {
	const text = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: demo}
steps:
  - name: cilium
    helm:
      chart: cilium:${CILIUM_VERSION:-1.18.4}
      repo: https://helm.cilium.io/
      namespace: kube-system
  - name: nodes-ready
    needs: [cilium]
    wait: {for: condition=Ready, on: nodes}
`
	s, err := spec.Load(spec.LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(text)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range s.Steps {
		fmt.Printf("%s (%s, %s): %s\n", st.Name, st.Type(), s.PosOf(st.Path), spec.Summary(st))
	}
	// Output:
	// cilium (helm, <stdin>:5:5): install chart cilium 1.18.4 from https://helm.cilium.io/ into kube-system
	// nodes-ready (wait, <stdin>:10:5): wait for condition=Ready on nodes
}

func ExampleProblems() {
	const text = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: demo}
steps:
  - name: a
    neds: [b]
    helm: {chart: app, repo: "https://ci:${TOKEN}@charts.example.com", namespace: "${TOKEN}-ns"}
`
	red := redact.New()
	_, err := spec.Load(spec.LoadOptions{
		Files:    []string{"-"},
		Stdin:    strings.NewReader(text),
		Environ:  []string{"KHOOK_SECRET_TOKEN=Hunter2"},
		Redactor: red,
	})
	var problems spec.Problems
	if errors.As(err, &problems) {
		for _, p := range problems {
			fmt.Println(p)
		}
	}
	// Output:
	// <stdin>:6:5: unknown field "neds" in steps.0 (did you mean "needs"?)
	// <stdin>:7:83: steps.0.helm.namespace: namespace "***-ns" is not a valid RFC 1123 label: use lowercase letters, digits and '-', starting and ending with a letter or digit
}
