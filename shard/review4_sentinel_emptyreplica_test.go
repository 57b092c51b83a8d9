package shard_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// A replica that restarts comes back empty and, until it has synced with
// its master, answers reads from that empty data set (Redis's default
// replica-serve-stale-data yes). The Sentinels go on listing it as
// healthy for seconds (they read a replica's INFO every 10s), and health
// checks only PING it. Reads of a Sentinel shard must not be answered by
// it: a GET of a key that the master holds must never come back nil.
func TestSentinelRestartedReplicaServesNoReads(t *testing.T) {
	set := startSentinelSetApart(t)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	c := newClient(t, cfg)
	ctx := context.Background()

	master, replica := shardServers(t, set, 0)
	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	listed := func() bool {
		st := c.Stats().Sentinel
		return len(st) == 1 && slices.Contains(st[0].Replicas, replica.Addr)
	}
	waitFor(t, 30*time.Second, "the replica to hold k and be listed", func() bool {
		v, err := replica.Do("GET", "k")
		return err == nil && v == "v" && listed()
	})

	// From now on the replica cannot sync: once restarted, it stays empty.
	if _, err := master.Do("ACL", "SETUSER", "harness", "-psync", "-sync"); err != nil {
		t.Fatal(err)
	}

	var (
		reads, wrong, failed atomic.Int64
		firstWrong           atomic.Value
		stop                 = make(chan struct{})
		wg                   sync.WaitGroup
	)
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			v, err := redis.String(c.Do(ctx, "GET", "k"))
			reads.Add(1)
			switch {
			case errors.Is(err, redis.ErrNil):
				wrong.Add(1)
				firstWrong.CompareAndSwap(nil, "nil")
			case err != nil:
				failed.Add(1)
				firstWrong.CompareAndSwap(nil, err.Error())
			case v != "v":
				wrong.Add(1)
				firstWrong.CompareAndSwap(nil, v)
			}
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
	}()
	waitFor(t, 10*time.Second, "reads to run", func() bool { return reads.Load() > 10 })

	if err := replica.Restart(); err != nil {
		t.Fatal(err)
	}
	// The replica answers again, with an empty data set.
	if n, err := replica.Do("DBSIZE"); err != nil || n != "0" {
		t.Fatalf("restarted replica: DBSIZE = %q, %v; want an empty replica", n, err)
	}
	// Reads go on until the client no longer lists the replica, and for a
	// while after.
	waitFor(t, 40*time.Second, "the client to stop listing the unsynced replica", func() bool { return !listed() })
	after := reads.Load()
	waitFor(t, 20*time.Second, "more reads", func() bool { return reads.Load() > after+200 })
	if w, f := wrong.Load(), failed.Load(); w != 0 || f != 0 {
		t.Fatalf("%d of %d reads of k were wrong and %d failed (first: %v); want every read to return v",
			w, reads.Load(), f, firstWrong.Load())
	}

	// Once it has synced it serves reads again.
	if _, err := master.Do("ACL", "SETUSER", "harness", "+psync", "+sync"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 40*time.Second, "the synced replica to be listed again", listed)
	var onReplica int64
	replicaCommands := func() int64 {
		for _, n := range c.Stats().Nodes {
			if n.Node.Addr == replica.Addr {
				return n.Commands
			}
		}
		return 0
	}
	onReplica = replicaCommands()
	waitFor(t, 20*time.Second, "reads on the replica again", func() bool { return replicaCommands() > onReplica+10 })
	if w, f := wrong.Load(), failed.Load(); w != 0 || f != 0 {
		t.Fatalf("%d of %d reads of k were wrong and %d failed (first: %v)", w, reads.Load(), f, firstWrong.Load())
	}
}
