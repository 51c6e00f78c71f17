package runner

import (
	"context"
	"fmt"
	"testing"

	"github.com/khook/khook/spec"
)

// BenchmarkEngineScheduling measures the engine's own cost per run on DAGs
// of instant steps: a chain (each step needs the previous one) and a fan
// (every step needs one root), so executor time does not hide it.
func BenchmarkEngineScheduling(b *testing.B) {
	for _, n := range []int{10, 100, 500} {
		for _, shape := range []string{"chain", "fan"} {
			b.Run(fmt.Sprintf("%s-%d", shape, n), func(b *testing.B) {
				f := newFake()
				for i := 0; i < b.N; i++ {
					e := engine(f, dag(shape, n)...)
					e.Run(context.Background())
				}
			})
		}
	}
}

func dag(shape string, n int) []*spec.Step {
	steps := make([]*spec.Step, n)
	for i := range steps {
		var needs []string
		switch {
		case i == 0:
		case shape == "chain":
			needs = []string{fmt.Sprintf("s%d", i-1)}
		default:
			needs = []string{"s0"}
		}
		steps[i] = step(fmt.Sprintf("s%d", i), needs...)
	}
	return steps
}
