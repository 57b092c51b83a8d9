package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// table is a grid of cells that renders as a Markdown table or as aligned
// plain text. Columns listed in right are right-aligned.
type table struct {
	header []string
	rows   [][]string
	right  map[int]bool
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// markdown writes t as a GitHub-flavoured Markdown table.
func (t *table) markdown(w io.Writer) error {
	line := func(cells []string) string {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		return "| " + strings.Join(esc, " | ") + " |\n"
	}
	var b strings.Builder
	b.WriteString(line(t.header))
	sep := make([]string, len(t.header))
	for i := range sep {
		sep[i] = "---"
		if t.right[i] {
			sep[i] = "---:"
		}
	}
	b.WriteString("|" + strings.Join(sep, "|") + "|\n")
	for _, r := range t.rows {
		b.WriteString(line(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// text writes t with columns padded to their widest cell, two spaces
// apart.
func (t *table) text(w io.Writer) error {
	widths := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range append([][]string{t.header}, t.rows...) {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pct writes a percentage with d decimals.
func pct(v float64, d int) string { return fmt.Sprintf("%.*f%%", d, v) }

// bytesText writes a byte count in B, kB or MB (powers of ten); a count
// that one decimal of kB would round to 1000.0 is written in MB.
func bytesText(n int64) string {
	switch {
	case n >= 999_950:
		return fmt.Sprintf("%.2f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// count writes an integer with thousands separated by commas.
func count(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if v < 0 && s != "0" {
		return "-" + b.String()
	}
	return b.String()
}

// micros writes a latency given in microseconds: "54 µs", "1.84 ms"; one
// that would round to 1000 µs is written in ms.
func micros(us float64) string {
	if us >= 999.5 {
		return fmt.Sprintf("%.2f ms", us/1000)
	}
	return fmt.Sprintf("%.0f µs", us)
}
