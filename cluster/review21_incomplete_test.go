package cluster

import (
	"errors"
	"testing"
)

// An incomplete topology is an *IncompleteError listing every uncovered
// range and what the topology did say; Fill gives each uncovered slot to
// its master in the table in use when that master is still listed, and
// to the first listed master otherwise, and leaves the rest as the
// topology said.
func TestReview21IncompleteErrorFill(t *testing.T) {
	prev := mustTable(t, threeShards()) // 7000: 0-5460, 7001: 5461-10922, 7002: 10923-16383
	cases := []struct {
		name      string
		shards    []Shard
		uncovered []SlotRange
		owners    map[int]string // slot -> master expected after Fill
	}{
		{
			name: "one slot of a listed master",
			shards: []Shard{
				{Master: node("127.0.0.1:7000"), Ranges: []SlotRange{{0, 5460}}},
				{Master: node("127.0.0.1:7001"), Ranges: []SlotRange{{5461, 9999}, {10001, 10922}}},
				{Master: node("127.0.0.1:7006"), Ranges: []SlotRange{{10923, 16383}}}, // a failover
			},
			uncovered: []SlotRange{{10000, 10000}},
			owners:    map[int]string{9999: "127.0.0.1:7001", 10000: "127.0.0.1:7001", 10001: "127.0.0.1:7001", 16383: "127.0.0.1:7006", 0: "127.0.0.1:7000"},
		},
		{
			name: "old master gone: the first listed",
			shards: []Shard{
				{Master: node("127.0.0.1:7001"), Ranges: []SlotRange{{5461, 10922}}},
				{Master: node("127.0.0.1:7000"), Ranges: []SlotRange{{0, 5460}}},
			},
			uncovered: []SlotRange{{10923, 16383}},
			owners:    map[int]string{10923: "127.0.0.1:7001", 16383: "127.0.0.1:7001", 5460: "127.0.0.1:7000"},
		},
		{
			name: "two ranges",
			shards: []Shard{
				{Master: node("127.0.0.1:7000"), Ranges: []SlotRange{{1, 5460}}},
				{Master: node("127.0.0.1:7001"), Ranges: []SlotRange{{5461, 10922}}},
				{Master: node("127.0.0.1:7002"), Ranges: []SlotRange{{10923, 16382}}},
			},
			uncovered: []SlotRange{{0, 0}, {16383, 16383}},
			owners:    map[int]string{0: "127.0.0.1:7000", 16383: "127.0.0.1:7002"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTable(tc.shards)
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("NewTable: %v, want ErrIncomplete", err)
			}
			if errors.Is(err, ErrMalformed) {
				t.Errorf("an incomplete table also matches ErrMalformed: %v", err)
			}
			var ie *IncompleteError
			if !errors.As(err, &ie) {
				t.Fatalf("errors.As finds no *IncompleteError in %v", err)
			}
			if len(ie.Uncovered) != len(tc.uncovered) {
				t.Fatalf("Uncovered %v, want %v", ie.Uncovered, tc.uncovered)
			}
			for i, r := range tc.uncovered {
				if ie.Uncovered[i] != r {
					t.Errorf("Uncovered[%d] = %v, want %v", i, ie.Uncovered[i], r)
				}
			}
			if len(ie.Shards) != len(tc.shards) {
				t.Fatalf("%d shards listed, want %d", len(ie.Shards), len(tc.shards))
			}
			filled, err := ie.Fill(prev)
			if err != nil {
				t.Fatalf("Fill: %v", err)
			}
			for slot, want := range tc.owners {
				if got := filled.Master(slot).Addr; got != want {
					t.Errorf("slot %d: master %s, want %s", slot, got, want)
				}
			}
			// Fill does not touch what the error holds.
			if ie.Shards[0].Ranges[0] != tc.shards[0].Ranges[0] || len(ie.Shards[0].Ranges) != len(tc.shards[0].Ranges) {
				t.Errorf("Fill changed the error's shards: %v", ie.Shards[0].Ranges)
			}
		})
	}
	empty := &IncompleteError{Uncovered: []SlotRange{{0, SlotCount - 1}}}
	if _, err := empty.Fill(prev); !errors.Is(err, ErrIncomplete) {
		t.Errorf("Fill with no shard: %v, want ErrIncomplete", err)
	}
	if got, want := empty.Error(), "shardis: incomplete slot table: slots 0-16383 not covered"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
