package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/reshard"
)

// TestReview11ProgressShowsTheMovedRate: --rate paces the keys that
// move, but the progress showed only the scan's rate, keys that stay
// included: a 3 -> 4 move at --rate 250 read "1000 moved, 1000 keys/s"
// after 4 s, as if the pace were four times what was asked. The line now
// gives the moved keys' rate next to them, and the scan's as such.
func TestReview11ProgressShowsTheMovedRate(t *testing.T) {
	p := reshard.Progress{Scanned: 4000, Total: 4000, Moved: 1000, KeysPerSecond: 1000, MovedPerSecond: 250, Elapsed: 4 * time.Second, Done: true}
	for _, tty := range []bool{false, true} {
		var out bytes.Buffer
		(&reshardBar{w: &out, tty: tty}).draw(p)
		if line := out.String(); !strings.Contains(line, "1000 moved (250 keys/s)") || !strings.Contains(line, "1000 scanned/s") {
			t.Errorf("tty %v: %q, want the moved keys' rate, 250 keys/s, and the scan's, 1000/s", tty, line)
		}
	}
}
