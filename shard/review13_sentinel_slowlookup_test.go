package shard_test

import (
	"context"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/shard"
)

// A Sentinel that announces host names names the master "vm:P", the
// replica its master "127.0.0.1:P": each health check of the replica
// compares the two, looking vm up. With a resolver slower than the
// check's timeout (300ms) and than a query's lookup bound (the dial
// timeout, 1s), no lookup ended: each was cut short, nothing was kept,
// and the synced replica was dropped from reads at every check and never
// listed again. The lookup now ends in the background (one per name) and
// its answer is kept: the replica goes on serving reads.
func TestReview13SentinelSlowLookupKeepsReplica(t *testing.T) {
	h := startHostNameSentinel(t)
	host, replica := h.host, h.replica

	cfg := sentinelConfig(h.set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = 200 * time.Millisecond
	c := newClient(t, cfg)
	skipUnlessMasterByName(t, c, h.byName)
	setKOnReplica(t, c, replica)

	const delay = 1500 * time.Millisecond
	var started, ended atomic.Int32
	t.Cleanup(addrkey.SetLookupForTest(func(ctx context.Context, h string) ([]netip.Addr, error) {
		started.Add(1)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		ended.Add(1)
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}))
	listed := func() bool {
		st := c.Stats().Sentinel
		return len(st) == 1 && slices.Contains(st[0].Replicas, replica.Addr)
	}
	waitFor(t, 10*time.Second, "a lookup to end and the replica to be listed", func() bool {
		return ended.Load() > 0 && listed()
	})
	roles := func() int {
		n, err := replica.CommandCalls("role")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := roles()
	waitFor(t, 10*time.Second, "five more ROLE checks of the replica", func() bool {
		if !listed() {
			t.Fatalf("the replica %s was dropped from reads after the lookup ended (Stats %+v)", replica.Addr, c.Stats().Sentinel)
		}
		return roles() >= before+5
	})
	if n := started.Load(); n > 3 {
		t.Errorf("%d lookups of %s started, want one at a time (at most 3 in this time)", n, host)
	}
}
