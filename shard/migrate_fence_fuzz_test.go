package shard_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
)

// FuzzParseFenceValue checks that any marker value parses without a panic
// and that a parsed value formats back to itself.
func FuzzParseFenceValue(f *testing.F) {
	for _, s := range []string{"armed 1700000000000", "fenced 0", "fenced -1", "armed", "waiting 1", " 1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, at, ok := shard.ParseFenceValue(s)
		if !ok {
			if p != 0 || !at.IsZero() {
				t.Fatalf("%q: not ok but %v %v", s, p, at)
			}
			return
		}
		if p != shard.PhaseFenced && p != shard.PhaseArmed {
			t.Fatalf("%q: phase %v", s, p)
		}
		if back := shard.FenceValue(p, at); back != s {
			p2, at2, ok2 := shard.ParseFenceValue(back)
			if !ok2 || p2 != p || !at2.Equal(at) || at2.Sub(at) != time.Duration(0) {
				t.Fatalf("%q parsed as %v %v formats as %q", s, p, at, back)
			}
		}
	})
}
