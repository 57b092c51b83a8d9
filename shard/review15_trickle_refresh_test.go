package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// A node that sends its topology (CLUSTER SHARDS, SLOTS or NODES of three
// masters and their replicas: thousands of bytes) a byte every 20 ms
// would take a minute to finish it. Discovery gives up on it within its
// bound (two dial timeouts and a read timeout) with a timeout naming the
// node, and takes the answer of another node meanwhile.
func TestReview15TrickledTopologyIsGivenUpForAnotherNode(t *testing.T) {
	rc := clusterForTest(t)
	seeds := rc.Seeds()
	px := redistest.StartTrickleProxy(t, seeds[0], 20*time.Millisecond, func(cmd string, _ []byte) bool { return cmd == "CLUSTER" })
	cfg := func(seeds ...string) shard.Config {
		c := clusterConfig(seeds...)
		c.Pool = pool.Options{DialTimeout: time.Second, ReadTimeout: 500 * time.Millisecond, WriteTimeout: time.Second}
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The trickling node alone: the discovery fails, in time.
	const bound = 2*time.Second + 500*time.Millisecond
	start := time.Now()
	c, err := shard.New(ctx, cfg(px.Addr))
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatalf("New with a trickling seed only: no error")
	}
	var se *cluster.SeedError
	if !errors.As(err, &se) || se.Seed != px.Addr || !isTimeout(err) {
		t.Errorf("New with a trickling seed only: %v, want a timeout naming %s", err, px.Addr)
	}
	t.Logf("the trickling seed alone: %v after %v", err, took)
	if took > bound+bound/2 {
		t.Errorf("New with a trickling seed only took %v, over %v", took, bound)
	}

	// The trickling node first: another node answers.
	start = time.Now()
	c = newClient(t, cfg(px.Addr, seeds[1]))
	took = time.Since(start)
	if n := len(c.Nodes()); n != 3 {
		t.Errorf("%d masters, want 3", n)
	}
	if took > bound {
		t.Errorf("New with a trickling seed first took %v, over %v", took, bound)
	}
	// A refresh asks the known nodes; with the trickling one listed
	// among the seeds it is done in time all the same.
	start = time.Now()
	if err := c.Refresh(ctx); err != nil {
		t.Errorf("Refresh: %v", err)
	}
	if took := time.Since(start); took > bound {
		t.Errorf("Refresh took %v, over %v", took, bound)
	}
}
