package shard_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A replica that serves no reads (here: it replicates another server) but
// that the Sentinels still list is asked for ROLE by every query. Those
// checks must not leave a pool of idle connections to it behind: once it
// retired, no connection of the client to it outlives a check.
func TestSentinelRetiredReplicaKeepsNoPooledConnection(t *testing.T) {
	opts := sentinelSetOptions(1)
	set := redistest.StartSentinelsTB(t, opts)
	other := redistest.StartTB(t, opts.Data)
	_, replica := shardServers(t, set, 0)
	cfg := sentinelConfig(set) // its connections are named sentinel-test
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = 200 * time.Millisecond
	c := newClient(t, cfg)
	ctx := context.Background()

	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	inStats := func() bool {
		for _, n := range c.Stats().Nodes {
			if n.Node.Addr == replica.Addr {
				return true
			}
		}
		return false
	}
	waitFor(t, 30*time.Second, "the replica to hold k and serve reads", func() bool {
		v, err := replica.Do("GET", "k")
		st := c.Stats().Sentinel
		return err == nil && v == "v" && len(st) == 1 && slices.Contains(st[0].Replicas, replica.Addr) && inStats()
	})
	host, port, _ := strings.Cut(other.Addr, ":")
	if _, err := replica.Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the replica to retire", func() bool { return !inStats() })
	queries := func() int64 {
		st := c.Stats().Sentinel
		if len(st) != 1 {
			return 0
		}
		return st[0].Queries
	}
	// Enough queries, each checking the replica, for a pooled connection
	// reused by them to be two seconds old.
	q0 := queries()
	waitFor(t, 30*time.Second, "15 more queries", func() bool { return queries() >= q0+15 })
	if _, err := set.Master(0); err != nil {
		t.Fatal(err)
	}
	list, err := replica.Do("CLIENT", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(list) {
		fields := map[string]string{}
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		age, _ := strconv.Atoi(fields["age"])
		if fields["name"] == "sentinel-test" && age >= 2 {
			t.Fatalf("the retired replica has a connection of the client %ds old: %s", age, strings.TrimSpace(line))
		}
	}
}
