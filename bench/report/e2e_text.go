package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/shardis/shardis/bench/e2e"
)

// e2eTable returns one row per case and target, the targets of a case
// next to each other.
func e2eTable(r *e2e.Report) *table {
	t := &table{
		header: []string{"case", "mode", "callers", "ops/s", "commands/s", "p50", "p99", "errors"},
		right:  map[int]bool{2: true, 3: true, 4: true, 5: true, 6: true, 7: true},
	}
	for _, c := range e2eCases(r) {
		for _, target := range r.Targets {
			res, ok := e2eResult(r, target.Name, c.Name)
			if !ok {
				t.add(c.Name, target.Name, fmt.Sprint(c.Callers), "not measured", "", "", "", "")
				continue
			}
			name := c.Name
			if res.Partial {
				name += " (cut short)"
			}
			t.add(name, target.Name, fmt.Sprint(c.Callers), count(res.OpsPerSec), count(res.CommandsPerSec),
				micros(res.P50Micros), micros(res.P99Micros), fmt.Sprint(res.Errors))
		}
	}
	return t
}

// firstErrors lists the first error of every result that had errors.
func firstErrors(r *e2e.Report) []string {
	var out []string
	for _, res := range r.Results {
		if res.Errors > 0 {
			out = append(out, fmt.Sprintf("%s %s: %d errors, first: %s", res.Target, res.Name, res.Errors, res.FirstError))
		}
	}
	return out
}

// E2EText writes the end-to-end results as a plain-text table for a
// terminal.
func E2EText(w io.Writer, r *e2e.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Servers: %s.\n", r.Servers)
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "  %s: %s\n", t.Name, t.Servers)
	}
	if r.Interrupted {
		b.WriteString("INTERRUPTED: the figures below are what was measured until then.\n")
	}
	fmt.Fprintf(&b, "Each case ran %.3g s per mode. One op is one command, pipeline, MSET or MGET; "+
		"p50 and p99 are the time of one op.\n\n", r.DurationSeconds)
	if err := e2eTable(r).text(&b); err != nil {
		return err
	}
	for _, e := range firstErrors(r) {
		fmt.Fprintf(&b, "%s\n", e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// E2EMarkdown writes the Markdown report of an end-to-end run, linking the
// charts of WriteE2E by relative file names; command, when not empty, is
// quoted as the command that produced it.
func E2EMarkdown(w io.Writer, r *e2e.Report, command string) error {
	var b strings.Builder
	b.WriteString("# End-to-end throughput: ring mode and cluster mode\n\n")
	if command != "" {
		fmt.Fprintf(&b, "Produced by:\n\n```sh\n%s\n```\n\n", command)
	}
	if r.Embedded {
		b.WriteString("> **Embedded servers:** redis-server was not installed, so these figures come from in-process " +
			"miniredis servers and say little about real Redis.\n\n")
	}
	if r.Interrupted {
		b.WriteString("> **Interrupted:** the run was stopped; the figures are what was measured until then.\n\n")
	}
	fmt.Fprintf(&b, "Servers: %s.\n\n", r.Servers)
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "- **%s**: %s\n", t.Name, t.Servers)
	}
	fmt.Fprintf(&b, "\nClients and servers shared one machine: %s/%s, %d CPUs, %s%s. Each case ran %.3g s per mode "+
		"after a warm-up. One operation (op) is one command, one pipeline, one MSET or one MGET; commands/s counts "+
		"the commands or keys they carry.\n\n", r.Environment.OS, r.Environment.Arch, r.Environment.CPUs,
		r.Environment.GoVersion, loadNote(r.Environment.Load), r.DurationSeconds)
	fmt.Fprintf(&b, "![Commands per second per case and mode](%s)\n\n", ThroughputFile)
	fmt.Fprintf(&b, "![Latency per operation, p50 to p99, per case and mode](%s)\n\n", LatencyFile)
	if err := e2eTable(r).markdown(&b); err != nil {
		return err
	}
	if errs := firstErrors(r); len(errs) > 0 {
		b.WriteString("\nErrors:\n\n")
		for _, e := range errs {
			fmt.Fprintf(&b, "- %s\n", e)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
