package shard_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A ForEachShard function, a Conn's WATCH and a Client.Tx that wait, within
// FailoverWait, for a Sentinel shard's new master hold no plan of the
// migration under way (only a round trip to a server is counted by the
// fence): arming, turning around and finishing the migration meanwhile
// take no longer than without them, and the three waits are still on when the
// migration has ended.
func TestReview12SentinelFailoverWaitHoldsNoMigration(t *testing.T) {
	users := []redistest.User{{Name: sentDataUser, Password: sentDataPW}}
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{
		Data: redistest.Options{Users: users}, Shards: 1, Sentinels: 1,
	})
	plain := redistest.StartNTB(t, 1, redistest.Options{Users: users})[0]
	master, err := set.Master(0)
	require.NoError(t, err)

	const failoverWait = 15 * time.Second
	// The switch waits at most a dial, write and read timeout (7 s) for
	// what the fence counts: far more than the bound below.
	po := pool.Options{DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: time.Second,
		Username: sentDataUser, Password: sentDataPW}
	sentCfg := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Timeout: time.Second, FailoverWait: failoverWait,
			RefreshInterval: -1,
			Shards:          []shard.SentinelShard{{Name: "s0", MasterName: set.Shards[0].Name}}}}
	plainCfg := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "new", Addr: plain.Addr, Weight: 1}}}
	c := newClient(t, sentCfg)
	ctx := context.Background()
	require.NoError(t, c.StartMigration(ctx, plainCfg))

	// No Sentinel to name a new master, and the master gone: both wait
	// the whole FailoverWait.
	require.NoError(t, set.Sentinels[0].Kill())
	require.NoError(t, master.Kill())
	before := c.Stats().Sentinel[0].Queries

	var plainRan atomic.Bool
	forEachErr := make(chan error, 1)
	go func() {
		forEachErr <- c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
			if n.Addr == plain.Addr {
				plainRan.Store(true)
			}
			_, err := conn.Do("PING")
			return err
		})
	}()
	conn := c.Conn()
	defer conn.Close()
	watchErr := make(chan error, 1)
	go func() {
		_, err := conn.Do("WATCH", "k") // routed by the old topology: the Sentinel shard
		watchErr <- err
	}()
	txErr := make(chan error, 1)
	go func() {
		_, err := c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error { return tx.Queue("INCR", "k") })
		txErr <- err
	}()
	waitFor(t, 10*time.Second, "all three to wait for a new master (queries asked)", func() bool {
		return plainRan.Load() && c.Stats().Sentinel[0].Queries >= before+3
	})

	start := time.Now()
	require.NoError(t, c.ArmMigration())
	require.NoError(t, c.AbortMigration(ctx)) // armed: turned around
	require.NoError(t, c.FinishMigration())
	took := time.Since(start)
	pendingForEach, pendingWatch, pendingTx := len(forEachErr) == 0, len(watchErr) == 0, len(txErr) == 0
	t.Logf("arming, turning around and finishing the migration took %v", took)
	require.Less(t, took, 3*time.Second, "arming, turning around and finishing the migration")
	require.True(t, pendingForEach, "ForEachShard still waits for the new master once the migration ended")
	require.True(t, pendingWatch, "the WATCH still waits for the new master once the migration ended")
	require.True(t, pendingTx, "Client.Tx still waits for the new master once the migration ended")

	var re *shard.RetryError
	select {
	case err := <-forEachErr:
		require.True(t, errors.As(err, &re), "ForEachShard's error %v wraps a *RetryError", err)
	case <-time.After(2 * failoverWait):
		t.Fatal("ForEachShard did not return")
	}
	select {
	case err := <-watchErr:
		require.True(t, errors.As(err, &re), "the WATCH's error %v wraps a *RetryError", err)
	case <-time.After(2 * failoverWait):
		t.Fatal("the WATCH did not return")
	}
	select {
	case err := <-txErr:
		require.True(t, errors.As(err, &re), "Client.Tx's error %v wraps a *RetryError", err)
	case <-time.After(2 * failoverWait):
		t.Fatal("Client.Tx did not return")
	}
}
