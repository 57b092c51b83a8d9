package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestClusterReplicaPoliciesWithTwoReplicas runs the read policies where
// they have a choice: every master has two replicas. replica-latency sends
// the reads of a slot to the replica with the lower measured PING time (one
// replica is made slow by stopping it for a moment during a health PING);
// replica-random spreads them over both.
func TestClusterReplicaPoliciesWithTwoReplicas(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 2, redistest.Options{})

	newReader := func(policy shard.ReadPolicy) *shard.Client {
		cfg := clusterConfig(rc.Seeds()...)
		cfg.Cluster.ReadFrom = policy
		// PINGs that may take long are not failures here: the slow
		// replica must stay up, only measured as slow.
		cfg.Health = shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 10, Timeout: 20 * time.Second}
		return newClient(t, cfg)
	}
	c := newReader(shard.ReadReplicaLatency)

	// A key, its master and the master's two replicas.
	const key = "latency:k"
	master, err := c.Router().Route(key)
	if err != nil {
		t.Fatal(err)
	}
	var replicaAddrs []string
	for _, s := range c.Router().(*shard.ClusterRouter).Table().Shards() {
		if s.Master.Addr == master.Addr {
			for _, r := range s.Replicas {
				replicaAddrs = append(replicaAddrs, r.Addr)
			}
		}
	}
	if len(replicaAddrs) != 2 {
		t.Fatalf("master %s has replicas %v, want 2", master.Addr, replicaAddrs)
	}
	var slow *redistest.Server
	for _, s := range rc.Replicas() {
		if s.Addr == replicaAddrs[0] {
			slow = s
		}
	}
	if slow == nil {
		t.Fatalf("replica %s not among the cluster's servers", replicaAddrs[0])
	}
	fast := replicaAddrs[1]
	if _, err := c.Do(ctx, "SET", key, "v"); err != nil {
		t.Fatal(err)
	}
	if err := c.ForEachMaster(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "WAIT", 2, 5000)
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// readerStats returns the RTT and command count of the replicas'
	// read-only connections.
	readerStats := func(c *shard.Client) map[string]shard.NodeStats {
		out := map[string]shard.NodeStats{}
		for _, st := range c.Stats().Nodes {
			if st.ReadOnly {
				out[st.Node.Addr] = st
			}
		}
		return out
	}
	waitFor(t, 30*time.Second, "health PINGs to measure both replicas", func() bool {
		st := readerStats(c)
		return st[slow.Addr].RTT > 0 && st[fast].RTT > 0
	})
	// Keep one replica slow: stopped most of the time, running for a
	// moment now and then, so that its health PINGs answer late and its
	// smoothed PING time stays far above the other's however busy the
	// machine is.
	stopSlow := make(chan struct{})
	slowDone := make(chan error, 1)
	go func() {
		var err error
		defer func() { slowDone <- err }()
		for {
			if err = slow.Pause(); err != nil {
				return
			}
			select {
			case <-stopSlow:
				err = slow.Resume()
				return
			case <-time.After(300 * time.Millisecond):
			}
			if err = slow.Resume(); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	stopped := false
	stopSlowly := func() {
		if !stopped {
			stopped = true
			close(stopSlow)
			if err := <-slowDone; err != nil {
				t.Errorf("pausing the slow replica: %v", err)
			}
		}
	}
	defer stopSlowly()
	waitFor(t, 60*time.Second, "the stopped replica to be measured slower", func() bool {
		st := readerStats(c)
		return st[slow.Addr].RTT > 4*st[fast].RTT && st[fast].RTT > 0
	})

	before := readerStats(c)
	const n = 100
	for i := range n {
		v, err := redis.String(c.Do(ctx, "GET", key))
		if err != nil || v != "v" {
			t.Fatalf("GET %d = %q, %v", i, v, err)
		}
	}
	after := readerStats(c)
	stopSlowly()
	if got := after[fast].Commands - before[fast].Commands; got < n {
		t.Errorf("replica-latency: the faster replica served %d of %d reads", got, n)
	}
	if got := after[slow.Addr].Commands - before[slow.Addr].Commands; got != 0 {
		t.Errorf("replica-latency: the slower replica served %d reads (RTT %v vs %v)", got,
			time.Duration(after[slow.Addr].RTT), time.Duration(after[fast].RTT))
	}

	// replica-random uses both replicas.
	r := newReader(shard.ReadReplicaRandom)
	for i := range 2 * n {
		if _, err := r.Do(ctx, "GET", key); err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
	}
	st := readerStats(r)
	for _, addr := range replicaAddrs {
		if st[addr].Commands < 20 {
			t.Errorf("replica-random: replica %s served %d of %d reads", addr, st[addr].Commands, 2*n)
		}
	}
}
