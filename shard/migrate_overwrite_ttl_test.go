package shard

import (
	"testing"
	"time"
)

// TestBlindOverwriteTTL: which commands are blind overwrites, and the
// expiry each sets.
func TestBlindOverwriteTTL(t *testing.T) {
	tests := []struct {
		name string
		args []any
		ttl  time.Duration
		ok   bool
	}{
		{"SET", []any{"k", "v"}, 0, true},
		{"set", []any{"k", "v"}, 0, true},
		{"SET", []any{"k", "v", "EX", "10"}, 10 * time.Second, true},
		{"SET", []any{"k", "v", "ex", 10}, 10 * time.Second, true},
		{"SET", []any{"k", "v", "PX", int64(1500)}, 1500 * time.Millisecond, true},
		{"SET", []any{"k", "v", "PX", []byte("7")}, 7 * time.Millisecond, true},
		{"SETEX", []any{"k", 30, "v"}, 30 * time.Second, true},
		{"PSETEX", []any{"k", "250", "v"}, 250 * time.Millisecond, true},
		{"SET", []any{"k", "v", "EX", "0"}, 0, false},
		{"SET", []any{"k", "v", "EX", "-1"}, 0, false},
		{"SET", []any{"k", "v", "EX", "ten"}, 0, false},
		{"SET", []any{"k", "v", "EX", "9223372036854775807"}, 0, false},
		{"SET", []any{"k", "v", "EX", 1.5}, 0, false},
		{"SET", []any{"k", "v", "EXAT", "99999999999"}, 0, false},
		{"SET", []any{"k", "v", "PXAT", "99999999999999"}, 0, false},
		{"SET", []any{"k", "v", "NX"}, 0, false},
		{"SET", []any{"k", "v", "XX"}, 0, false},
		{"SET", []any{"k", "v", "GET"}, 0, false},
		{"SET", []any{"k", "v", "KEEPTTL"}, 0, false},
		{"SET", []any{"k", "v", "EX", "10", "NX"}, 0, false},
		{"SET", []any{"k", "v", "NX", "EX"}, 0, false},
		{"SET", []any{"k"}, 0, false},
		{"SETEX", []any{"k", "10"}, 0, false},
		{"SETEX", []any{"k", "0", "v"}, 0, false},
		{"SETNX", []any{"k", "v"}, 0, false},
		{"GET", []any{"k"}, 0, false},
		{"APPEND", []any{"k", "v"}, 0, false},
	}
	for _, tt := range tests {
		ttl, ok := blindOverwriteTTL(tt.name, tt.args)
		if ok != tt.ok || ttl != tt.ttl {
			t.Errorf("%s %v: got (%v, %v), want (%v, %v)", tt.name, tt.args, ttl, ok, tt.ttl, tt.ok)
		}
	}
}

// FuzzBlindOverwriteTTL: any arguments give an answer, never a panic, and
// a blind overwrite's expiry is never negative.
func FuzzBlindOverwriteTTL(f *testing.F) {
	f.Add("SET", "k", "v", "EX", "10")
	f.Add("SETEX", "k", "5", "v", "")
	f.Add("SET", "k", "v", "PX", "-3")
	f.Fuzz(func(t *testing.T, name, a, b, c, d string) {
		for n := 0; n <= 4; n++ {
			args := []any{a, b, c, d}[:n]
			if ttl, ok := blindOverwriteTTL(name, args); ttl < 0 || (!ok && ttl != 0) {
				t.Fatalf("%q %q: (%v, %v)", name, args, ttl, ok)
			}
		}
	})
}
