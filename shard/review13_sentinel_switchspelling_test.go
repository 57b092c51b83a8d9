package shard_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/redistest"
)

// A +switch-master that names the master in use under another spelling
// (a Sentinel that announces host names: "vm:P", while the client took
// the master as "127.0.0.1:P" from one that does not) comes while the
// resolver fails: whether the two name one server is not known, and the
// master in use, which is not the one the message says was failed over
// from, still says it is the master. That is no failover. Before, the
// unanswered comparison counted as a change: a failover was counted and
// reported, and the shard's pools were closed (every pooled connection
// lost). The message comes here from a server that stands in for a
// Sentinel (a plain redis-server the client subscribes to, where PUBLISH
// is allowed), so that its spelling is the test's.
func TestReview13SentinelRespeltSwitchMessageIsNoFailover(t *testing.T) {
	host := loopbackHostName(t)
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	master, replica := shardServers(t, set, 0)
	fake := redistest.StartTB(t, redistest.Options{DefaultPassword: sentPW})

	cfg := sentinelConfig(set)
	cfg.Sentinel.Addrs = []string{set.Sentinels[0].Addr, fake.Addr}
	cfg.Sentinel.RefreshInterval = -1 // queries come from Refresh and the message
	c := newClient(t, cfg)
	events := failoverLog(c)
	ctx := context.Background()
	if st := c.Stats().Sentinel; len(st) != 1 || st[0].Master != master.Addr {
		t.Fatalf("Sentinel stats %+v: want the master taken as %s", st, master.Addr)
	}
	waitFor(t, 10*time.Second, "both subscriptions", func() bool {
		return c.Stats().Sentinel[0].Subscribed == 2
	})
	clientID := pooledClientID(t, c)
	id := clientID()
	if again := clientID(); again != id {
		t.Fatalf("two CLIENT IDs in a row on an idle client: %d, %d (no pooled connection reused)", id, again)
	}
	t.Cleanup(addrkey.SetLookupForTest(func(context.Context, string) ([]netip.Addr, error) { return nil, errNoDNS }))

	msg := fmt.Sprintf("%s %s %d %s %d", set.Names()[0], host, replica.Port, host, master.Port)
	if _, err := fake.Do("PUBLISH", "+switch-master", msg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the +switch-master to be handled", func() bool {
		st := c.Stats().Sentinel
		return len(st) == 1 && st[0].SwitchMessages >= 1
	})
	_ = c.Refresh(ctx) // the query the message asked for has run after it (the stand-in answers no query)
	st := c.Stats().Sentinel
	if st[0].Failovers != 0 || len(events()) != 0 {
		t.Errorf("+switch-master %q with the resolver failing: %d failovers counted, master changes %v; want none", msg, st[0].Failovers, events())
	}
	if got := clientID(); got != id {
		t.Errorf("+switch-master %q with the resolver failing: the pooled connection (CLIENT ID %d) was closed, now %d", msg, id, got)
	}
}
