package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/shardis/shardis/bench/placement"
)

// Placement chart files, written by WritePlacement next to report.md.
const (
	BalanceFile  = "balance.svg"
	MovementFile = "movement.svg"
	LookupFile   = "lookup.svg"
)

// ReportFile is the name of the Markdown report in a report directory.
const ReportFile = "report.md"

// layoutTable returns the figures of every strategy on one layout, one row
// per strategy.
func layoutTable(r *placement.Report, l placement.Layout) *table {
	t := &table{
		header: []string{"strategy", "keys/shard min–max", "stddev",
			"add 1: moved (ideal)", "add 1: between old", "remove 1: moved (ideal)", "remove 1: between rest",
			"ns/lookup", "allocs/lookup", "memory"},
		right: map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true},
	}
	for _, s := range r.Strategies {
		res, ok := r.Result(s, l.Name)
		switch {
		case !ok:
			t.add(s, "not measured", "", "", "", "", "", "", "", "")
		case res.Skipped != "":
			t.add(s, "skipped: "+res.Skipped, "", "", "", "", "", "", "", "")
		default:
			t.add(s,
				pct(res.Balance.MinPct, 1)+" – "+pct(res.Balance.MaxPct, 1),
				pct(res.Balance.StddevPct, 1),
				fmt.Sprintf("%s (%s)", pct(res.Add.MovedPct, 2), pct(res.Add.IdealPct, 2)),
				pct(res.Add.BetweenSurvivorsPct, 2),
				fmt.Sprintf("%s (%s)", pct(res.Remove.MovedPct, 2), pct(res.Remove.IdealPct, 2)),
				pct(res.Remove.BetweenSurvivorsPct, 2),
				fmt.Sprintf("%.1f", res.Lookup.NsPerOp),
				fmt.Sprintf("%.2f", res.Lookup.AllocsPerOp),
				bytesText(res.MemoryBytes))
		}
	}
	return t
}

// shareTable returns, for a weighted layout, every shard's share of the
// keys against its share of the weight, one row per strategy.
func shareTable(r *placement.Report, l placement.Layout) *table {
	t := &table{header: []string{"strategy"}, right: map[int]bool{}}
	total := l.TotalWeight()
	for i, s := range l.Shards {
		t.header = append(t.header, fmt.Sprintf("%s (weight %d = %s)", s.Label(), s.Weight,
			pct(100*float64(s.Weight)/float64(total), 1)))
		t.right[i+1] = true
	}
	for _, name := range r.Strategies {
		res, ok := r.Result(name, l.Name)
		if !ok || res.Skipped != "" {
			continue
		}
		row := []string{name}
		for _, sh := range res.Balance.Shards {
			row = append(row, pct(sh.SharePct, 1))
		}
		t.add(row...)
	}
	return t
}

// randomStddev is the standard deviation, in % of the fair share, that
// placing keys independently at random with the layout's shares would
// show on average: the sampling noise that any strategy's figure includes.
func randomStddev(l placement.Layout, keys int) float64 {
	total := float64(l.TotalWeight())
	sum := 0.0
	for _, s := range l.Shards {
		p := float64(s.Weight) / total
		sum += (1 - p) / (float64(keys) * p)
	}
	return 100 * math.Sqrt(sum/float64(len(l.Shards)))
}

// loadNote describes a load average span for a report, "" without one.
func loadNote(load string) string {
	if load == "" {
		return ""
	}
	return "; load average " + load + " (other work shared the CPUs)"
}

// PlacementText writes the comparison as plain-text tables, one per
// layout, for a terminal.
func PlacementText(w io.Writer, r *placement.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Placement of %d keys (%s). Balance: keys per shard in %% of the shard's fair share. "+
		"Movement: %% of all keys that change shard (ideal in brackets); \"between\" counts keys moved between "+
		"shards present before and after (0 for a consistent strategy).\n", r.Keys, r.KeySource)
	if r.Interrupted {
		b.WriteString("INTERRUPTED: only the results below were measured.\n")
	}
	for _, l := range r.Layouts {
		fmt.Fprintf(&b, "\n%s (%d shards; random placement would show a stddev of %.1f%%)\n",
			l.Name, len(l.Shards), randomStddev(l, r.Keys))
		if err := layoutTable(r, l).text(&b); err != nil {
			return err
		}
		if l.Weighted() {
			fmt.Fprintf(&b, "\n%s: share of the keys per shard\n", l.Name)
			if err := shareTable(r, l).text(&b); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PlacementMarkdown writes the Markdown report of the comparison. It links
// the charts of WritePlacement by relative file names; command, when not
// empty, is quoted as the command that produced the report.
func PlacementMarkdown(w io.Writer, r *placement.Report, command string) error {
	var b strings.Builder
	b.WriteString("# Placement strategy comparison\n\n")
	if command != "" {
		fmt.Fprintf(&b, "Produced offline (no server involved) by:\n\n```sh\n%s\n```\n\n", command)
	}
	fmt.Fprintf(&b, "Keys: %d (%s). Machine: %s/%s, %d CPUs, %s%s.\n\n", r.Keys, r.KeySource,
		r.Environment.OS, r.Environment.Arch, r.Environment.CPUs, r.Environment.GoVersion, loadNote(r.Environment.Load))
	if r.Interrupted {
		b.WriteString("> **Interrupted:** only part of the comparison ran; missing rows say \"not measured\".\n\n")
	}
	b.WriteString("Strategies:\n\n")
	for _, s := range r.Strategies {
		d, _ := placement.Describe(s)
		fmt.Fprintf(&b, "- **%s**: %s\n", s, d)
	}
	b.WriteString("\n## Balance\n\n")
	fmt.Fprintf(&b, "![Keys per shard, from the emptiest to the busiest shard, in %% of the fair share](%s)\n\n", BalanceFile)
	b.WriteString("Each bar spans the emptiest to the busiest shard of one layout, in percent of the keys the shard " +
		"should hold (its fair share, proportional to its weight). Short bars around 100% are good.\n\n")
	b.WriteString("## Movement\n\n")
	fmt.Fprintf(&b, "![Keys moved when a shard is added or removed, over the ideal](%s)\n\n", MovementFile)
	b.WriteString("Keys that change shard when one shard is added, or the last one removed, divided by the " +
		"least possible fraction (the share the added shard should get, or the removed one had). 1 is ideal; " +
		"above it, keys also move between shards that were there all along.\n\n")
	b.WriteString("## Lookup cost and memory\n\n")
	fmt.Fprintf(&b, "![Nanoseconds per lookup and bytes of routing structure](%s)\n\n", LookupFile)
	b.WriteString("## Results per layout\n\n")
	b.WriteString("Columns: keys per shard (emptiest – busiest, in % of the fair share) and their standard deviation; " +
		"keys moved when one shard is added and when the last one is removed, in % of all keys (ideal in brackets), " +
		"and the part of them that moved between shards present before and after (0 for a consistent strategy); " +
		"lookup time and heap allocations per key; heap kept by the routing structure.\n\n")
	for _, l := range r.Layouts {
		fmt.Fprintf(&b, "### %s (%d shards)\n\n", l.Name, len(l.Shards))
		fmt.Fprintf(&b, "Placing these keys independently at random would show a standard deviation of about %.1f%%: "+
			"smaller differences are noise of the key sample.\n\n", randomStddev(l, r.Keys))
		if err := layoutTable(r, l).markdown(&b); err != nil {
			return err
		}
		b.WriteString("\n")
		if l.Weighted() {
			fmt.Fprintf(&b, "Share of the keys per shard against its share of the weight:\n\n")
			if err := shareTable(r, l).markdown(&b); err != nil {
				return err
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("## Method\n\n")
	fmt.Fprintf(&b, "- Balance: %s.\n- Movement: %s.\n- Lookup: %s.\n- Memory: %s.\n",
		r.Method.Balance, r.Method.Movement, r.Method.Lookup, r.Method.Memory)
	_, err := io.WriteString(w, b.String())
	return err
}
