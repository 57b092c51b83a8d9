package report

import (
	"fmt"
	"math"

	"github.com/shardis/shardis/bench/e2e"
	"gonum.org/v1/plot/vg"
)

// End-to-end chart files, written by WriteE2E next to report.md.
const (
	ThroughputFile = "throughput.svg"
	LatencyFile    = "latency.svg"
)

// e2eCases returns the cases of a report: the planned ones, else those of
// the results in the order they first appear.
func e2eCases(r *e2e.Report) []e2e.Case {
	if len(r.Cases) > 0 {
		return r.Cases
	}
	var out []e2e.Case
	seen := map[string]bool{}
	for _, res := range r.Results {
		if !seen[res.Name] {
			seen[res.Name] = true
			out = append(out, res.Case)
		}
	}
	return out
}

func e2eResult(r *e2e.Report, target, name string) (e2e.Result, bool) {
	for _, res := range r.Results {
		if res.Target == target && res.Name == name {
			return res, true
		}
	}
	return e2e.Result{}, false
}

// e2eSeries returns one value per case for every target (NaN where the
// case did not run).
func e2eSeries(r *e2e.Report, cases []e2e.Case, value func(e2e.Result) float64) [][]float64 {
	out := make([][]float64, len(r.Targets))
	for ti, t := range r.Targets {
		out[ti] = make([]float64, len(cases))
		for ci, c := range cases {
			out[ti][ci] = math.NaN()
			if res, ok := e2eResult(r, t.Name, c.Name); ok && res.Ops > 0 {
				out[ti][ci] = value(res)
			}
		}
	}
	return out
}

// e2eBars adds one bar group per case, one bar per target.
func e2eBars(p *panel, r *e2e.Report, cases []e2e.Case, lo, hi [][]float64, legend string) {
	k := len(r.Targets)
	w := vg.Points(math.Min(18, 48/float64(k)))
	for ti, t := range r.Targets {
		b := &bars{hi: hi[ti], width: w, offset: groupOffset(ti, k, w), color: colour(ti)}
		if lo != nil {
			b.lo = lo[ti]
		}
		p.Add(b)
		p.legend.Add(t.Name+legend, b)
	}
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.Name
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(cases))-0.4
}

// splitCases separates single-command cases from batches.
func splitCases(r *e2e.Report) (single, batch []e2e.Case) {
	for _, c := range e2eCases(r) {
		if c.Kind == e2e.Single {
			single = append(single, c)
		} else {
			batch = append(batch, c)
		}
	}
	return single, batch
}

// e2ePanels makes one panel for single commands and one for batches,
// leaving out an empty one, and fills each with fill.
func e2ePanels(r *e2e.Report, titles [2]string, xLabel, yLabel string, fill func(*panel, []e2e.Case)) ([]byte, error) {
	single, batch := splitCases(r)
	var panels []*panel
	for i, cases := range [][]e2e.Case{single, batch} {
		if len(cases) == 0 {
			continue
		}
		p := newPanel(titles[i], xLabel, yLabel)
		fill(p, cases)
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("shardis: no end-to-end results to chart")
	}
	return svgOf(panels, chartWidth, panelHeight)
}

// ThroughputChart returns throughput.svg: commands per second of every
// case and target, single commands and batches in separate panels.
func ThroughputChart(r *e2e.Report) ([]byte, error) {
	return e2ePanels(r, [2]string{
		"Throughput of single commands (SET, GET) from c callers; higher is better",
		"Throughput of batches from one caller (pipelines, MSET, MGET); higher is better",
	}, fmt.Sprintf("case (%.3g s each)", r.DurationSeconds), "thousand commands per second",
		func(p *panel, cases []e2e.Case) {
			hi := e2eSeries(r, cases, func(res e2e.Result) float64 { return res.CommandsPerSec / 1000 })
			e2eBars(p, r, cases, nil, hi, "")
			_, max := extent(hi)
			p.Y.Min, p.Y.Max = 0, math.Max(max*1.1, 1)
		})
}

// LatencyChart returns latency.svg: for every case and target a bar from
// the median to the 99th percentile time of one operation, on a
// logarithmic axis, single commands and batches in separate panels.
func LatencyChart(r *e2e.Report) ([]byte, error) {
	return e2ePanels(r, [2]string{
		"Latency of one command: bar from median (p50) to p99; lower is better",
		"Latency of one pipeline, MSET or MGET: p50 to p99; lower is better",
	}, "case", "microseconds (log scale)",
		func(p *panel, cases []e2e.Case) {
			lo := e2eSeries(r, cases, func(res e2e.Result) float64 { return res.P50Micros })
			hi := e2eSeries(r, cases, func(res e2e.Result) float64 { return res.P99Micros })
			e2eBars(p, r, cases, log10All(lo), log10All(hi), ": p50 to p99")
			min, _ := extent(lo)
			_, max := extent(hi)
			logAxis(p, math.Max(min, 1)/1.5, math.Max(max, 10)*1.5, logTicks{})
		})
}
