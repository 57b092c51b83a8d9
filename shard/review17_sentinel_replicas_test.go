package shard_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A Sentinel that announces host names names the master "vm:P", and
// each of its replicas names its master "127.0.0.1:P": a query compares
// every replica's master with the announced one, which looks vm up.
// With a resolver that does not answer, each comparison waited up to the
// dial timeout (1s), one replica after another, and none of it was
// counted in the bound of the whole query: with eight replicas the bound
// (6.5s here) ran out before their ROLE checks, and every replica, in
// sync and serving reads, stopped serving them until the next query.
// The replicas are now compared in parallel, within one dial timeout,
// and the bound counts it: they keep serving reads.
func TestReview17SentinelManyReplicasSlowResolver(t *testing.T) {
	host := loopbackHostName(t)
	const replicas = 8
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	o.Replicas = replicas
	set := redistest.StartSentinelsTB(t, o)
	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	name := set.Names()[0]
	s := set.Sentinels[0]
	monitorByHostName(t, s, name, host, master.Port, 1)
	var addrs []string
	for _, n := range set.Shards[0].Nodes {
		if n != master {
			addrs = append(addrs, n.Addr)
		}
	}
	waitFor(t, 60*time.Second, "the Sentinel to list every replica", func() bool {
		v, err := s.Do("SENTINEL", "REPLICAS", name)
		if err != nil {
			return false
		}
		for _, a := range addrs {
			if !strings.Contains(v, a[strings.LastIndexByte(a, ':')+1:]) {
				return false
			}
		}
		return true
	})

	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = -1 // queries come from Refresh
	cfg.Sentinel.Timeout = 250 * time.Millisecond
	cfg.Pool.ReadTimeout = 250 * time.Millisecond
	cfg.Pool.WriteTimeout = 250 * time.Millisecond
	c := newClient(t, cfg)
	skipUnlessMasterByName(t, c, fmt.Sprintf("%s:%d", host, master.Port))
	ctx := context.Background()
	listed := func() []string {
		st := c.Stats().Sentinel
		if len(st) != 1 {
			return nil
		}
		return st[0].Replicas
	}
	waitFor(t, 60*time.Second, "every replica to serve reads", func() bool {
		_ = c.Refresh(ctx)
		return len(listed()) == replicas
	})

	// From now on no lookup of a host name ends until the test does.
	release := make(chan struct{})
	t.Cleanup(addrkey.SetLookupForTest(func(context.Context, string) ([]netip.Addr, error) {
		<-release
		return nil, fmt.Errorf("no answer")
	}))
	t.Cleanup(func() { close(release) })

	start := time.Now()
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("Refresh with a resolver that does not answer took %v", took)
	if got := listed(); len(got) != replicas {
		t.Fatalf("after Refresh %d of %d replicas serve reads (%v), want all: the query ran out of time", len(got), replicas, got)
	}
	// One dial timeout (1s) per replica, one after another, would be 8s:
	// compared in parallel they take about two (the listing, then the
	// check after ROLE).
	if took >= replicas*time.Second {
		t.Errorf("Refresh took %v, want less than %v: the replicas were compared one after another", took, replicas*time.Second)
	}
}
