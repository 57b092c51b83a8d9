package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws a one-line progress bar on a terminal stream. On any
// other stream (a log file, a pipe, a CI job's output) it writes plain
// lines instead, the first at once, then one every logEvery, one when
// the label changes (bench e2e: a case starts) and one at the end, as
// reshard's progress does: no carriage returns.
type progress struct {
	w         io.Writer
	tty       bool
	label     string
	total     int
	start     time.Time
	last      time.Time
	lastLabel string // the label of the last plain line (tty false)
	open      bool   // a bar is drawn and its line not ended
}

func newProgress(w io.Writer, label string, total int) *progress {
	now := time.Now()
	return &progress{w: w, tty: isTerminal(w), label: label, total: total, start: now}
}

// set redraws the bar for done of total, at most every 50ms and at the end.
func (p *progress) set(done int) {
	now := time.Now()
	every := 50 * time.Millisecond
	if !p.tty {
		every = logEvery
	}
	if done < p.total && !p.last.IsZero() && now.Sub(p.last) < every && (p.tty || p.label == p.lastLabel) {
		return
	}
	p.last = now
	if !p.tty {
		p.lastLabel = p.label
		fmt.Fprintf(p.w, "%s %3d%% %d/%d", strings.TrimSpace(p.label), percent(done, p.total), done, p.total)
		if done >= p.total {
			fmt.Fprintf(p.w, " in %v", now.Sub(p.start).Round(time.Millisecond))
		}
		fmt.Fprintln(p.w)
		return
	}
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = done * width / p.total
	}
	p.open = done < p.total
	fmt.Fprintf(p.w, "\r%-14s [%s%s] %3d%% %d/%d", p.label,
		strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		percent(done, p.total), done, p.total)
	if done >= p.total {
		fmt.Fprintf(p.w, " in %v\n", now.Sub(p.start).Round(time.Millisecond))
	}
}

// stop ends the line of a bar left unfinished (the work failed or was
// interrupted), so that what is printed next starts a line of its own.
func (p *progress) stop() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

func percent(a, b int) int {
	if b == 0 {
		return 100
	}
	return a * 100 / b
}

// barChart prints one bar per row, scaled to the largest value.
func barChart(w io.Writer, labels []string, values []int) {
	max, lw := 0, 0
	for i, v := range values {
		if v > max {
			max = v
		}
		if len(labels[i]) > lw {
			lw = len(labels[i])
		}
	}
	const width = 40
	for i, v := range values {
		n := 0
		if max > 0 {
			n = v * width / max
		}
		fmt.Fprintf(w, "  %-*s %s %d\n", lw, labels[i], strings.Repeat("█", n), v)
	}
}
