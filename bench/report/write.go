package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shardis/shardis/bench/e2e"
	"github.com/shardis/shardis/bench/placement"
)

// WritePlacement writes the Markdown report of a placement comparison
// (ReportFile) and its charts (BalanceFile, MovementFile, LookupFile) into
// dir, creating dir when needed, and returns the paths written. command is
// quoted in the report as the command that produced it ("" for none).
func WritePlacement(dir string, r *placement.Report, command string) ([]string, error) {
	var md bytes.Buffer
	if err := PlacementMarkdown(&md, r, command); err != nil {
		return nil, err
	}
	return writeAll(dir, []file{
		{ReportFile, func() ([]byte, error) { return md.Bytes(), nil }},
		{BalanceFile, func() ([]byte, error) { return BalanceChart(r) }},
		{MovementFile, func() ([]byte, error) { return MovementChart(r) }},
		{LookupFile, func() ([]byte, error) { return LookupChart(r) }},
	})
}

// WriteE2E writes the Markdown report of an end-to-end run (ReportFile)
// and its charts (ThroughputFile, LatencyFile) into dir, creating dir when
// needed, and returns the paths written. A report without results gets no
// charts.
func WriteE2E(dir string, r *e2e.Report, command string) ([]string, error) {
	var md bytes.Buffer
	if err := E2EMarkdown(&md, r, command); err != nil {
		return nil, err
	}
	files := []file{{ReportFile, func() ([]byte, error) { return md.Bytes(), nil }}}
	if len(r.Results) > 0 {
		files = append(files,
			file{ThroughputFile, func() ([]byte, error) { return ThroughputChart(r) }},
			file{LatencyFile, func() ([]byte, error) { return LatencyChart(r) }})
	}
	return writeAll(dir, files)
}

type file struct {
	name    string
	content func() ([]byte, error)
}

func writeAll(dir string, files []file) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("shardis: report directory: %w", err)
	}
	var paths []string
	for _, f := range files {
		data, err := f.content()
		if err != nil {
			return paths, err
		}
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return paths, fmt.Errorf("shardis: write report: %w", err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
