package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/reshard"
)

// TestReshardProgressToALog checks the mover's progress when stderr is not
// a terminal (a log file, a journal): plain lines, no carriage returns, one
// every logEvery however often the mover reports, the first at once and
// the last always.
func TestReshardProgressToALog(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bar := &reshardBar{w: &out, now: func() time.Time { return clock }}
	// 60 s of reports every 200 ms, as Move makes them, then the last.
	const reports = 300
	for i := range reports {
		bar.draw(reshard.Progress{Scanned: int64(i), Total: 1000, Elapsed: time.Duration(i) * 200 * time.Millisecond, ETA: time.Minute})
		clock = clock.Add(200 * time.Millisecond)
	}
	bar.draw(reshard.Progress{Scanned: 1000, Total: 1000, Moved: 250, Elapsed: time.Minute, Done: true})

	text := out.String()
	if strings.Contains(text, "\r") {
		t.Fatalf("carriage returns in a log's progress: %q", text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	// t=0, 10, 20, 30, 40, 50 s, and the end.
	if len(lines) != 7 {
		t.Fatalf("%d lines, want 7 (one per 10 s of 60, and the end):\n%s", len(lines), text)
	}
	if !strings.HasPrefix(lines[0], "reshard: 0% 0/1000 keys") || !strings.Contains(lines[0], "ETA 1m0s") {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "reshard: 5% 50/1000 keys") {
		t.Errorf("second line %q, want the report of 10 s later", lines[1])
	}
	if last := lines[6]; !strings.HasPrefix(last, "reshard: 100% 1000/1000 keys, 250 moved") || !strings.HasSuffix(last, "done in 1m0s") {
		t.Errorf("last line %q", last)
	}
}

// TestReshardProgressOnATerminal checks that a terminal still gets one bar
// redrawn in place, ending with a newline.
func TestReshardProgressOnATerminal(t *testing.T) {
	var out bytes.Buffer
	bar := &reshardBar{w: &out, tty: true}
	for i := range 5 {
		bar.draw(reshard.Progress{Scanned: int64(i), Total: 4, ETA: time.Second})
	}
	bar.draw(reshard.Progress{Scanned: 4, Total: 4, Done: true, Elapsed: time.Second})
	text := out.String()
	if n := strings.Count(text, "\r"); n != 6 {
		t.Errorf("%d redraws, want 6: %q", n, text)
	}
	if strings.Count(text, "\n") != 1 || !strings.HasSuffix(text, "in 1s\n") {
		t.Errorf("the bar does not end with one newline: %q", text)
	}
}
