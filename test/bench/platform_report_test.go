package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// tableRow is one line of the three-way table: a tool's runs of one phase.
type tableRow struct {
	phase, tool string
	runs        []measured
}

// report reports khook's runs and, when given, the script's and helmfile's
// and the ratios; a named phase also goes into the three-way table.
func (pb *platformBench) report(b *testing.B, phase string, k, s, h []measured) {
	b.Helper()
	for _, t := range []tableRow{{phase, "khook", k}, {phase, "script", s}, {phase, "helmfile", h}} {
		if len(t.runs) == 0 {
			continue
		}
		if phase != "" {
			pb.rows = append(pb.rows, t)
		}
		wall := medianWall(t.runs)
		b.ReportMetric(wall.Seconds(), t.tool+"-s")
		for _, v := range verbs {
			b.ReportMetric(mean(t.runs, func(m measured) float64 { return float64(m.counts.Verbs[v]) }), t.tool+"-"+v)
		}
		total := mean(t.runs, func(m measured) float64 { return float64(m.counts.Total()) })
		writes := mean(t.runs, func(m measured) float64 { return float64(m.counts.Writes()) })
		dry := mean(t.runs, func(m measured) float64 { return float64(m.counts.DryRuns) })
		disc := mean(t.runs, func(m measured) float64 { return float64(m.counts.Discovery) })
		rss := mean(t.runs, func(m measured) float64 { return float64(m.maxRSS) / (1 << 20) })
		revs := mean(t.runs, func(m measured) float64 { return float64(m.revisions) })
		b.ReportMetric(total, t.tool+"-requests")
		b.ReportMetric(writes, t.tool+"-writes")
		b.ReportMetric(dry, t.tool+"-dryruns")
		b.ReportMetric(disc, t.tool+"-discovery")
		b.ReportMetric(rss, t.tool+"-peak-RSS-MiB")
		b.ReportMetric(revs, t.tool+"-revisions")
		last := t.runs[len(t.runs)-1].counts
		b.Logf("%s: %.1fs, %.0f requests (%s; %.0f discovery, %.0f dry runs), %.0f writes, %.0f Helm revisions, peak RSS %.0f MiB",
			t.tool, wall.Seconds(), total, byVerb(last), disc, dry, writes, revs, rss)
	}
	ks := medianWall(k).Seconds()
	if len(s) > 0 {
		r := ks / medianWall(s).Seconds()
		b.ReportMetric(r, "wall-ratio")
		b.Logf("khook takes %.3f of the script's wall time", r)
	}
	if len(h) > 0 {
		r := ks / medianWall(h).Seconds()
		b.ReportMetric(r, "helmfile-ratio")
		b.Logf("khook takes %.3f of helmfile's wall time", r)
	}
	b.ReportMetric(float64(medianWall(k).Nanoseconds()), "ns/op")
}

// printTable prints the three-way table (docs/performance.md): per phase
// and tool, the median wall time, its ratio to helmfile's, requests, writes
// and Helm revisions. To stdout: a parent benchmark's b.Log is not shown.
func (pb *platformBench) printTable() {
	if len(pb.rows) == 0 {
		return
	}
	fmt.Printf("\nThe three-way table (medians of %d run(s) each; load average at the start %s, at the end %s):\n\n%s\n",
		len(pb.rows[0].runs), pb.loadStart, loadAverage(), threeWayTable(pb.rows))
}

// loadAverage is the machine's 1, 5 and 15-minute load average, for the
// record beside wall times on a shared machine.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func threeWayTable(rows []tableRow) string {
	helmfile := map[string]float64{}
	for _, r := range rows {
		if r.tool == "helmfile" {
			helmfile[r.phase] = medianWall(r.runs).Seconds()
		}
	}
	var t strings.Builder
	t.WriteString("| run | tool | wall | × helmfile | requests | writes | of which to Jobs | dry runs | Helm revisions | peak RSS |\n")
	t.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		wall := medianWall(r.runs).Seconds()
		ratio := "—"
		if hw, ok := helmfile[r.phase]; ok && hw > 0 {
			ratio = fmt.Sprintf("%.3f ×", wall/hw)
		}
		fmt.Fprintf(&t, "| %s | %s | %.1f s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f MiB |\n", r.phase, r.tool, wall, ratio,
			mean(r.runs, func(m measured) float64 { return float64(m.counts.Total()) }),
			mean(r.runs, func(m measured) float64 { return float64(m.counts.Writes()) }),
			mean(r.runs, func(m measured) float64 { return float64(m.jobWrites) }),
			mean(r.runs, func(m measured) float64 { return float64(m.counts.DryRuns) }),
			mean(r.runs, func(m measured) float64 { return float64(m.revisions) }),
			mean(r.runs, func(m measured) float64 { return float64(m.maxRSS) / (1 << 20) }))
	}
	return t.String()
}
