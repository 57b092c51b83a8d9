package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shardis/shardis/bench/e2e"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// svgTexts checks that data is well-formed XML with an <svg> root and
// returns the content of its <text> elements.
func svgTexts(t *testing.T, data []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	inText, root := false, ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
			}
			inText = el.Name.Local == "text"
		case xml.CharData:
			if inText && strings.TrimSpace(string(el)) != "" {
				texts = append(texts, strings.TrimSpace(string(el)))
			}
		case xml.EndElement:
			inText = false
		}
	}
	assert.Equal(t, "svg", root)
	return texts
}

func TestPlacementChartsHaveTitlesAxesAndLegends(t *testing.T) {
	r := placementReport(t)
	for _, c := range []struct {
		name  string
		chart func() ([]byte, error)
		want  []string
	}{
		{"balance", func() ([]byte, error) { return BalanceChart(r) },
			[]string{"Balance: keys per shard, emptiest to busiest (5000 keys)", "keys on a shard, % of its fair share",
				"strategy", "fair share (100%)"}},
		{"movement", func() ([]byte, error) { return MovementChart(r) },
			[]string{"keys moved ÷ ideal (log scale)", "ideal = 1", "1"}},
		{"lookup", func() ([]byte, error) { return LookupChart(r) },
			[]string{"nanoseconds per lookup", "bytes (log scale)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, err := c.chart()
			require.NoError(t, err)
			texts := svgTexts(t, data)
			for _, w := range c.want {
				assert.Contains(t, texts, w)
			}
			for _, s := range r.Strategies {
				assert.Contains(t, texts, s, "x tick label")
			}
			for _, l := range r.Layouts {
				assert.Contains(t, texts, l.Name, "legend entry")
			}
			// Sans-serif text with metric-compatible fallbacks.
			assert.Contains(t, string(data), "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
			assert.NotContains(t, string(data), "NaN")
		})
	}
}

func TestE2EChartsHaveTitlesAxesAndLegends(t *testing.T) {
	r := e2eReport()
	th, err := ThroughputChart(r)
	require.NoError(t, err)
	texts := svgTexts(t, th)
	for _, w := range []string{"thousand commands per second", "ring", "cluster", "single c=1", "pipeline 1k", "MGET 100"} {
		assert.Contains(t, texts, w)
	}
	lat, err := LatencyChart(r)
	require.NoError(t, err)
	texts = svgTexts(t, lat)
	for _, w := range []string{"microseconds (log scale)", "ring: p50 to p99", "cluster: p50 to p99", "MSET 100"} {
		assert.Contains(t, texts, w)
	}
	_, err = ThroughputChart(&e2e.Report{})
	assert.Error(t, err)
	_, err = LatencyChart(&e2e.Report{})
	assert.Error(t, err)
}

func TestPlacementMarkdownHasARowPerStrategyAndLayout(t *testing.T) {
	r := placementReport(t)
	var b bytes.Buffer
	require.NoError(t, PlacementMarkdown(&b, r, "shardis bench placement --generate 5000"))
	md := b.String()
	assert.Contains(t, md, "shardis bench placement --generate 5000")
	for _, f := range []string{BalanceFile, MovementFile, LookupFile} {
		assert.Contains(t, md, "]("+f+")", "relative link to the chart")
	}
	for _, l := range r.Layouts {
		section := md[strings.Index(md, "### "+l.Name):]
		if next := strings.Index(section[4:], "### "); next > 0 {
			section = section[:next+4]
		}
		for _, s := range r.Strategies {
			assert.Regexp(t, regexp.MustCompile(`(?m)^\| `+s+` \|`), section, "%s row in %s", s, l.Name)
		}
	}
	// The weighted layout skips the strategies without weights and shows
	// shares against weights.
	assert.Contains(t, md, "| rendezvous | skipped: no weights |")
	assert.Contains(t, md, "shard-2 (weight 3 = 75.0%)")
}

func TestPlacementTextFigures(t *testing.T) {
	r := placementReport(t)
	var b bytes.Buffer
	require.NoError(t, PlacementText(&b, r))
	text := b.String()
	res, ok := r.Result("modula", "10 equal")
	require.True(t, ok)
	row := regexp.MustCompile(`(?m)^modula .*$`).FindString(text[strings.Index(text, "10 equal"):])
	assert.Contains(t, row, pct(res.Add.MovedPct, 2))
	assert.Contains(t, row, pct(res.Add.BetweenSurvivorsPct, 2))
	assert.Contains(t, row, pct(res.Balance.MinPct, 1)+" – "+pct(res.Balance.MaxPct, 1))
	assert.Contains(t, text, "random placement would show a stddev of")
}

func TestE2EMarkdownAndText(t *testing.T) {
	r := e2eReport()
	var md, text bytes.Buffer
	require.NoError(t, E2EMarkdown(&md, r, "shardis bench e2e"))
	require.NoError(t, E2EText(&text, r))
	for _, c := range []string{"single c=1", "single c=16", "pipeline 1k", "MSET 100", "MGET 100"} {
		for _, mode := range []string{"ring", "cluster"} {
			assert.Regexp(t, `(?m)^\| `+c+` \| `+mode+` \|`, md.String())
			assert.Regexp(t, `(?m)^`+c+` +`+mode+` `, text.String())
		}
	}
	assert.Contains(t, md.String(), "]("+ThroughputFile+")")
	assert.Contains(t, md.String(), "]("+LatencyFile+")")
	assert.NotContains(t, md.String(), "Embedded servers")

	r.Embedded, r.Interrupted = true, true
	r.Results[0].Errors, r.Results[0].FirstError = 3, "boom"
	r.Results = r.Results[:3]
	md.Reset()
	require.NoError(t, E2EMarkdown(&md, r, ""))
	assert.Contains(t, md.String(), "**Embedded servers:**")
	assert.Contains(t, md.String(), "**Interrupted:**")
	assert.Contains(t, md.String(), "ring single c=1: 3 errors, first: boom")
	assert.Regexp(t, `\| single c=16 \| cluster \| 16 \| not measured \|`, md.String())
}

func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	paths, err := WritePlacement(dir, placementReport(t), "")
	require.NoError(t, err)
	assert.Len(t, paths, 4)
	e2eDir := filepath.Join(dir, "e2e")
	paths, err = WriteE2E(e2eDir, e2eReport(), "")
	require.NoError(t, err)
	assert.Len(t, paths, 3)
	for _, p := range []string{ReportFile, BalanceFile, MovementFile, LookupFile, "e2e/" + ThroughputFile, "e2e/" + LatencyFile} {
		st, err := os.Stat(filepath.Join(dir, p))
		require.NoError(t, err, p)
		assert.Positive(t, st.Size(), p)
	}
	// An empty end-to-end report gets its Markdown but no charts.
	paths, err = WriteE2E(filepath.Join(dir, "empty"), &e2e.Report{}, "")
	require.NoError(t, err)
	assert.Len(t, paths, 1)
	// A directory that cannot be created is an error.
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	_, err = WriteE2E(filepath.Join(blocker, "sub"), e2eReport(), "")
	assert.ErrorContains(t, err, "shardis: ")
}

func TestFormatting(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200", math.NaN(): "-"} {
		assert.Equal(t, want, count(in), "%v", in)
	}
	for in, want := range map[float64]string{54.4: "54 µs", 999: "999 µs", 1840: "1.84 ms"} {
		assert.Equal(t, want, micros(in))
	}
	for in, want := range map[int64]string{0: "0 B", 999: "999 B", 32768: "32.8 kB", 1232552: "1.23 MB"} {
		assert.Equal(t, want, bytesText(in))
	}
	for in, want := range map[float64]string{100: "100 B", 1e4: "10 kB", 1e6: "1 MB", 2e9: "2 GB"} {
		assert.Equal(t, want, byteSize(in))
	}
}

func TestTicks(t *testing.T) {
	var labels []string
	for _, tk := range (linearTicks{}).Ticks(70, 130) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"70", "80", "90", "100", "110", "120", "130"}, labels)
	labels = nil
	for _, tk := range (logTicks{}).Ticks(math.Log10(0.5), math.Log10(150)) {
		labels = append(labels, tk.Label)
	}
	assert.Equal(t, []string{"0.5", "1", "2", "5", "10", "20", "50", "100"}, labels)
	labels = nil
	for _, tk := range (logTicks{decades: true, label: byteSize}).Ticks(1, 6.3) {
		labels = append(labels, tk.Label)
	}
	assert.Equal(t, []string{"10 B", "100 B", "1 kB", "10 kB", "100 kB", "1 MB"}, labels)
	assert.Len(t, (linearTicks{}).Ticks(5, 5), 1)
}

func TestTableText(t *testing.T) {
	tb := &table{header: []string{"a", "number"}, right: map[int]bool{1: true}}
	tb.add("long name", "1")
	tb.add("x|y", "22")
	var b bytes.Buffer
	require.NoError(t, tb.text(&b))
	assert.Equal(t, "a          number\nlong name       1\nx|y            22\n", b.String())
	b.Reset()
	require.NoError(t, tb.markdown(&b))
	assert.Equal(t, "| a | number |\n|---|---:|\n| long name | 1 |\n| x\\|y | 22 |\n", b.String())
}
