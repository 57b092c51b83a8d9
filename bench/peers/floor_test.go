package peers

import (
	"context"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// TestFloor checks the redigo floor against three real servers: every key
// lands on server crc32(key) % 3 (computed here, not by the floor), GET
// and MGET read back what SET wrote, and a wrong value fails the check.
func TestFloor(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	f := NewFloor(addrs, 0)
	defer f.Close()
	ctx := context.Background()
	keys := randomKeys(300)
	if err := f.Set(ctx, keys, value); err != nil {
		t.Fatal(err)
	}
	counts := make([]int, len(servers))
	for _, k := range keys {
		want := int(crc32.ChecksumIEEE([]byte(k)) % 3)
		counts[want]++
		got, err := servers[want].Do("GET", k)
		if err != nil || got != value {
			t.Fatalf("key %q on %s: %q, %v", k, servers[want].Addr, got, err)
		}
	}
	for i, n := range counts {
		if n == 0 {
			t.Errorf("no key on server %d (counts %v): placement untested", i, counts)
		}
	}
	if err := f.Get(ctx, keys, value); err != nil {
		t.Fatal(err)
	}
	if err := f.MGet(ctx, keys, value); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
	}{
		{"GET of another value", func() error { return f.Get(ctx, keys[:10], "other") }},
		{"MGET of another value", func() error { return f.MGet(ctx, keys[:10], "other") }},
		{"GET of a missing key", func() error { return f.Get(ctx, []string{"no-such-key"}, value) }},
		{"MGET of a missing key", func() error { return f.MGet(ctx, append(keys[:3:3], "no-such-key"), value) }},
	}
	for _, tc := range tests {
		if err := tc.run(); !errors.Is(err, ErrFloor) {
			t.Errorf("%s: err = %v, want ErrFloor", tc.name, err)
		}
	}
}
