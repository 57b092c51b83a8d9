package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/shardis/shardis/bench/placement"
	"gonum.org/v1/plot/vg"
)

// Chart sizes.
var (
	chartWidth  = vg.Points(820)
	panelHeight = vg.Points(330)
)

// placementSeries returns, for every layout, one value per strategy
// (NaN where the strategy was skipped or not measured).
func placementSeries(r *placement.Report, value func(placement.Result) float64) [][]float64 {
	out := make([][]float64, len(r.Layouts))
	for li, l := range r.Layouts {
		out[li] = make([]float64, len(r.Strategies))
		for si, s := range r.Strategies {
			res, ok := r.Result(s, l.Name)
			if !ok || res.Skipped != "" {
				out[li][si] = math.NaN()
				continue
			}
			out[li][si] = value(res)
		}
	}
	return out
}

// groupedBars adds one bar group per strategy, one bar per layout.
func groupedBars(p *panel, r *placement.Report, lo, hi [][]float64) {
	k := len(r.Layouts)
	w := vg.Points(math.Min(12, 64/float64(k)))
	for li, l := range r.Layouts {
		b := &bars{hi: hi[li], width: w, offset: groupOffset(li, k, w), color: colour(li)}
		if lo != nil {
			b.lo = lo[li]
		}
		p.Add(b)
		p.legend.Add(l.Name, b)
		if skipped := skippedOn(r, l.Name); skipped != "" {
			p.legend.Add("   no bar: " + skipped)
			p.legend.Add("   (no weights)")
		}
	}
	p.NominalX(r.Strategies...)
	p.X.Min, p.X.Max = -0.6, float64(len(r.Strategies))-0.4
}

// skippedOn lists the strategies skipped on a layout, "a, b".
func skippedOn(r *placement.Report, layout string) string {
	var names []string
	for _, s := range r.Strategies {
		if res, ok := r.Result(s, layout); ok && res.Skipped != "" {
			names = append(names, s)
		}
	}
	return strings.Join(names, ", ")
}

func extent(series [][]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	return lo, hi
}

// positive returns series with every value that is not above 0 made NaN,
// which extent skips.
func positive(series [][]float64) [][]float64 {
	out := make([][]float64, len(series))
	for i, s := range series {
		out[i] = make([]float64, len(s))
		for j, v := range s {
			out[i][j] = math.NaN()
			if v > 0 {
				out[i][j] = v
			}
		}
	}
	return out
}

// BalanceChart returns balance.svg: for every strategy and layout, a bar
// from the emptiest to the busiest shard, in percent of a shard's fair
// share.
func BalanceChart(r *placement.Report) ([]byte, error) {
	p := newPanel(fmt.Sprintf("Balance: keys per shard, emptiest to busiest (%d keys)", r.Keys),
		"strategy", "keys on a shard, % of its fair share")
	lo := placementSeries(r, func(res placement.Result) float64 { return res.Balance.MinPct })
	hi := placementSeries(r, func(res placement.Result) float64 { return res.Balance.MaxPct })
	groupedBars(p, r, lo, hi)
	ref := refLine(100, colour(7))
	p.Add(ref)
	p.legend.Add("fair share (100%)", ref)
	min, _ := extent(lo)
	_, max := extent(hi)
	min, max = math.Min(min, 100), math.Max(max, 100)
	span := math.Max(max-min, 10)
	p.Y.Min = math.Max(0, math.Floor(min-span*0.1))
	p.Y.Max = max + span*0.1
	return svgOf([]*panel{p}, chartWidth, panelHeight)
}

// MovementChart returns movement.svg: two panels, adding and removing one
// shard, with the fraction of keys moved over the ideal fraction on a
// logarithmic axis (1 is ideal).
func MovementChart(r *placement.Report) ([]byte, error) {
	ratio := func(m placement.Movement) float64 {
		if m.IdealPct <= 0 {
			return math.NaN()
		}
		return m.MovedPct / m.IdealPct
	}
	add := placementSeries(r, func(res placement.Result) float64 { return ratio(res.Add) })
	rem := placementSeries(r, func(res placement.Result) float64 { return ratio(res.Remove) })
	// A strategy that moves no key has a ratio of 0, which the log axis
	// cannot show (log10All draws no bar): the axis spans the others.
	lo1, hi1 := extent(positive(add))
	lo2, hi2 := extent(positive(rem))
	lo, hi := math.Min(0.5, 0.8*math.Min(lo1, lo2)), math.Max(2, math.Max(hi1, hi2))
	var plots []*panel
	for _, panel := range []struct {
		title  string
		series [][]float64
	}{
		{"Movement: keys moved when a shard is added, over the ideal 1/(n+1)", add},
		{"Movement: keys moved when the last shard is removed, over the ideal 1/n", rem},
	} {
		p := newPanel(panel.title, "strategy", "keys moved ÷ ideal (log scale)")
		groupedBars(p, r, nil, log10All(panel.series))
		ref := refLine(0, colour(7)) // log10(1)
		p.Add(ref)
		p.legend.Add("ideal = 1", ref)
		logAxis(p, lo, hi*1.5, logTicks{})
		plots = append(plots, p)
	}
	return svgOf(plots, chartWidth, panelHeight)
}

// LookupChart returns lookup.svg: nanoseconds per lookup, and the heap the
// routing structure keeps (log scale), per strategy and layout.
func LookupChart(r *placement.Report) ([]byte, error) {
	ns := placementSeries(r, func(res placement.Result) float64 { return res.Lookup.NsPerOp })
	mem := placementSeries(r, func(res placement.Result) float64 {
		if res.MemoryBytes <= 0 {
			return math.NaN()
		}
		return float64(res.MemoryBytes)
	})

	p1 := newPanel("Lookup cost: time to place one key (fastest of 5 rounds)", "strategy", "nanoseconds per lookup")
	groupedBars(p1, r, nil, ns)
	_, max := extent(ns)
	p1.Y.Min, p1.Y.Max = 0, math.Max(max*1.1, 1)

	p2 := newPanel("Memory: heap kept by the routing structure (no bar: nothing kept)", "strategy", "bytes (log scale)")
	groupedBars(p2, r, nil, log10All(mem))
	lo, hi := extent(mem)
	logAxis(p2, math.Pow(10, math.Floor(math.Log10(math.Max(lo, 1)))), hi*2, logTicks{decades: true, label: byteSize})
	return svgOf([]*panel{p1, p2}, chartWidth, panelHeight)
}
