package cluster

import (
	"errors"
	"testing"
)

// checkFill checks what Fill promises for the incomplete topology in err:
// every slot the topology gave keeps its master, every other slot goes to
// its master in prev when that one is listed as a master, else to the
// first listed master.
func checkFill(t *testing.T, err error, prev *Table) {
	t.Helper()
	var ie *IncompleteError
	if !errors.As(err, &ie) {
		if errors.Is(err, ErrIncomplete) {
			t.Fatalf("ErrIncomplete without an *IncompleteError: %v", err)
		}
		return
	}
	if len(ie.Uncovered) == 0 {
		t.Fatalf("an *IncompleteError with no uncovered range: %v", err)
	}
	filled, ferr := ie.Fill(prev)
	if len(ie.Shards) == 0 {
		if ferr == nil || filled != nil {
			t.Fatalf("Fill with no shard: %v, %v", filled, ferr)
		}
		return
	}
	if ferr != nil {
		t.Fatalf("Fill: %v", ferr)
	}
	checkTable(t, filled)
	want := make([]string, SlotCount)
	masters := map[string]bool{}
	for _, s := range ie.Shards {
		masters[s.Master.Addr] = true
		for _, r := range s.Ranges {
			for slot := r.Start; slot <= r.End; slot++ {
				want[slot] = s.Master.Addr
			}
		}
	}
	for _, r := range ie.Uncovered {
		for slot := r.Start; slot <= r.End; slot++ {
			if want[slot] != "" {
				t.Fatalf("slot %d is listed as uncovered but %s owns it", slot, want[slot])
			}
			if a := prev.Master(slot).Addr; masters[a] {
				want[slot] = a
			} else {
				want[slot] = ie.Shards[0].Master.Addr
			}
		}
	}
	for slot, w := range want {
		if w == "" {
			t.Fatalf("slot %d neither owned nor listed as uncovered", slot)
		}
		if got := filled.Master(slot).Addr; got != w {
			t.Fatalf("slot %d: Fill gave %s, want %s", slot, got, w)
		}
	}
}

func FuzzReview21IncompleteFill(f *testing.F) {
	for _, r := range replySeeds() {
		f.Add(encodeReply(r))
	}
	f.Add(encodeReply(resp(A{A{"slots", A{0, 100, 200, 16000}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
		A{"slots", A{101, 150}, "nodes", A{shardNode(idB, 7001, "master", "online")}}})))
	prevs := []*Table{nil, mustTable(f, threeShards())}
	f.Fuzz(func(t *testing.T, data []byte) {
		reply := decodeReply(data)
		for _, prev := range prevs {
			_, err := ParseShards(reply, "127.0.0.1:7000")
			checkFill(t, err, prev)
			_, err = ParseSlots(reply, "127.0.0.1:7001")
			checkFill(t, err, prev)
		}
	})
}
