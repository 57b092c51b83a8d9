package shard_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A replica that replicates another master than the shard's (made a
// replica of some other server by hand, or by a stale configuration)
// holds that server's data, and the Sentinels go on listing it under the
// shard's master until they next read its INFO (every 10s). Its link to
// its master is up, so a check of the link state alone lets it through.
// Reads of the shard must not be served from the other server's data.
func TestSentinelReplicaOfAnotherMasterServesNoReads(t *testing.T) {
	opts := sentinelSetOptions(1)
	set := redistest.StartSentinelsTB(t, opts)
	other := redistest.StartTB(t, opts.Data)
	master, replica := shardServers(t, set, 0)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = 200 * time.Millisecond
	checks := countChecks(&cfg, replica.Addr)
	c := newClient(t, cfg)
	ctx := context.Background()

	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Do("SET", "k", "other"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the replica to hold k and be listed", func() bool {
		v, err := replica.Do("GET", "k")
		st := c.Stats().Sentinel
		return err == nil && v == "v" && len(st) == 1 && slices.Contains(st[0].Replicas, replica.Addr)
	})
	host, port, _ := strings.Cut(other.Addr, ":")
	if _, err := replica.Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the replica to hold the other server's data", func() bool {
		v, err := replica.Do("GET", "k")
		return err == nil && v == "other"
	})
	if m, err := set.Master(0); err != nil || m.Addr != master.Addr {
		t.Fatalf("the shard's master is %v (%v); want %s", m, err, master.Addr)
	}
	waitReplicaChecked(t, c, replica.Addr, checks)
	readsSeeMaster(ctx, t, c, "the replica now replicates "+other.Addr)
}
