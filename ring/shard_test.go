package ring

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseShards(t *testing.T) {
	tests := []struct {
		in   string
		want []Shard
	}{
		{"127.0.0.1:6381:2 shard-a,127.0.0.1:6382:1 shard-b", []Shard{
			{Name: "shard-a", Addr: "127.0.0.1:6381", Weight: 2},
			{Name: "shard-b", Addr: "127.0.0.1:6382", Weight: 1},
		}},
		{"127.0.0.1:6379", []Shard{{Addr: "127.0.0.1:6379", Weight: 1}}},
		{" redis-a:6379 , redis-b:6380:3 ", []Shard{{Addr: "redis-a:6379", Weight: 1}, {Addr: "redis-b:6380", Weight: 3}}},
		{"h:1 n1,h:2:7", []Shard{{Name: "n1", Addr: "h:1", Weight: 1}, {Addr: "h:2", Weight: 7}}},
		{"[::1]:6379:2 v6,[fe80::1]:6380", []Shard{{Name: "v6", Addr: "[::1]:6379", Weight: 2}, {Addr: "[fe80::1]:6380", Weight: 1}}},
		{"h:65535:1048576\tnamé", []Shard{{Name: "namé", Addr: "h:65535", Weight: MaxWeight}}},
	}
	for _, tc := range tests {
		got, err := ParseShards(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseShards(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		again, err := ParseShards(FormatShards(got))
		if err != nil || !slices.Equal(again, got) {
			t.Errorf("round trip of %q via %q: %+v, %v", tc.in, FormatShards(got), again, err)
		}
	}
}

func TestParseShardsErrors(t *testing.T) {
	tests := []struct {
		in    string
		also  error // besides ErrBadShardList
		quote string
	}{
		{"", ErrNoShards, ""},
		{"  ", ErrNoShards, ""},
		{"h:1,", nil, `""`},
		{"h:1,,h:2", nil, `""`},
		{"h", nil, `"h"`},
		{":6379", nil, `":6379"`},
		{"h:", nil, `"h:"`},
		{"h:0", nil, `"h:0"`},
		{"h:65536", nil, `"h:65536"`},
		{"h:06379", nil, `"h:06379"`},
		{"h:-1", nil, `"h:-1"`},
		{"h:1:0", ErrBadWeight, `"h:1:0"`},
		{"h:1:-2", ErrBadWeight, `"h:1:-2"`},
		{"h:1:x", ErrBadWeight, `"h:1:x"`},
		{"h:1:1048577", ErrBadWeight, `"h:1:1048577"`},
		{"h:1:1:1", ErrBadWeight, `"h:1:1:1"`},
		{"h:1:", ErrBadWeight, `"h:1:"`},
		{"h:1 two words", nil, `"h:1 two words"`},
		{"::1:6379", nil, `"::1:6379"`},
		{"[::1:6379", nil, `"[::1:6379"`},
		{"[]:6379", nil, `"[]:6379"`},
		{"h:1 a,h:1 b", ErrDuplicateShard, `"h:1 b"`},
		{"h:1 a,h:2 a", ErrDuplicateShard, `"h:2 a"`},
		{"h:1,h:2 h:1", ErrDuplicateShard, `"h:2 h:1"`},
		{"h:1 a\x00b", nil, `a\x00b`},
		{"h\x01:1", nil, `h\x01:1`},
	}
	for _, tc := range tests {
		got, err := ParseShards(tc.in)
		if err == nil || got != nil {
			t.Errorf("ParseShards(%q) = %+v, %v; want an error", tc.in, got, err)
			continue
		}
		if !errors.Is(err, ErrBadShardList) || tc.also != nil && !errors.Is(err, tc.also) {
			t.Errorf("ParseShards(%q): %v does not wrap ErrBadShardList and %v", tc.in, err, tc.also)
		}
		if !strings.HasPrefix(err.Error(), "shardis: ") || !strings.Contains(err.Error(), tc.quote) {
			t.Errorf("ParseShards(%q): message %q should start with \"shardis: \" and quote %s", tc.in, err, tc.quote)
		}
	}
}

func TestShardLabelAndString(t *testing.T) {
	if l := (Shard{Addr: "h:1"}).Label(); l != "h:1" {
		t.Errorf("unnamed label %q", l)
	}
	if l := (Shard{Name: "n", Addr: "h:1"}).Label(); l != "n" {
		t.Errorf("named label %q", l)
	}
	if s := (Shard{Name: "n", Addr: "h:1", Weight: 3}).String(); s != "h:1:3 n" {
		t.Errorf("String() = %q", s)
	}
}
