package e2e

import (
	"testing"
)

// BenchmarkParallelBranches runs three independent two-step branches
// (create a pod that turns ready after 2s, wait for it) and reports the run's
// wall time over its longest branch (the sum of that branch's step
// durations): 1.0 means the branches cost no more than the slowest one.
func BenchmarkParallelBranches(b *testing.B) {
	var ratioSum, wallSum, longestSum, sumSum float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ns := kc.Namespace(b)
		b.StartTimer()
		out := khookB(b, "apply", "-f", testdata("branches.yaml"), "--set", "NS="+ns, "-o", "json")
		branch := map[string]int64{}
		for _, s := range out.Results.Steps {
			if s.Status != ok {
				b.Fatalf("step %s is %s: %s", s.Name, s.Status, s.Error)
			}
			branch[s.Name[len(s.Name)-1:]] += s.DurationMs
		}
		var longest, sum int64
		for _, d := range branch {
			longest = max(longest, d)
			sum += d
		}
		sumSum += float64(sum)
		wall := float64(out.Results.DurationMs)
		ratioSum += wall / float64(longest)
		wallSum += wall
		longestSum += float64(longest)
	}
	n := float64(b.N)
	b.ReportMetric(ratioSum/n, "wall/longest-branch")
	b.ReportMetric(wallSum/n, "wall-ms")
	b.ReportMetric(longestSum/n, "longest-branch-ms")
	b.ReportMetric(sumSum/n, "sum-of-branches-ms")
}
