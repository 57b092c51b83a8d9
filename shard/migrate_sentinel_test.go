package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key moving to (or back to) a Sentinel shard is MIGRATEd to the shard's
// verified master: the shard's node address is the key of its pools
// ("sentinel/<name>"), which the old owner cannot connect to.
func TestMigrationToSentinelShardTargetsItsMaster(t *testing.T) {
	users := []redistest.User{{Name: sentDataUser, Password: sentDataPW}}
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{
		Data: redistest.Options{Users: users}, Shards: 1, Sentinels: 1,
	})
	plain := redistest.StartNTB(t, 1, redistest.Options{Users: users})[0]
	master, err := set.Master(0)
	require.NoError(t, err)

	po := pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second,
		Username: sentDataUser, Password: sentDataPW}
	sentCfg := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Timeout: time.Second,
			Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Shards[0].Name}}}}
	plainCfg := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "old", Addr: plain.Addr, Weight: 1}}}

	cases := []struct {
		name string
		// start returns a client that routes keys to the Sentinel shard
		// while they still sit on the plain server.
		start func(t *testing.T, ctx context.Context) *shard.Client
	}{
		{"into a Sentinel ring (Config.Migration)", func(t *testing.T, ctx context.Context) *shard.Client {
			cfg := sentCfg
			from := plainCfg
			cfg.Migration = &shard.Migration{From: &from, Armed: true}
			return newClient(t, cfg)
		}},
		{"back to a Sentinel ring (AbortMigration)", func(t *testing.T, ctx context.Context) *shard.Client {
			c := newClient(t, sentCfg)
			require.NoError(t, c.StartMigration(ctx, plainCfg))
			require.NoError(t, c.ArmMigration()) // a process alone: no fence to wait for
			require.NoError(t, c.AbortMigration(ctx))
			require.NoError(t, c.ArmMigration())
			return c
		}},
	}
	t.Run("refused with replica reads", func(t *testing.T) {
		cfg := sentCfg
		cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
		c := newClient(t, cfg)
		err := c.StartMigration(context.Background(), plainCfg)
		require.ErrorIs(t, err, shard.ErrMigration)
		assert.True(t, strings.HasPrefix(err.Error(), "shardis: "), err.Error())
		_, on := c.Migration()
		assert.False(t, on)
	})
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			const n = 20
			key := func(i int) string { return fmt.Sprintf("sentmig%d:%d", ci, i) }
			for i := range n {
				_, err := plain.Do("SET", key(i), fmt.Sprint("v", i))
				require.NoError(t, err)
			}
			c := tc.start(t, ctx)
			for i := range n {
				got, err := c.Do(ctx, "GETEX", key(i)) // a write that changes nothing: moves the key
				require.NoError(t, err, key(i))
				assert.Equal(t, []byte(fmt.Sprint("v", i)), got, key(i))
			}
			for i := range n {
				at, err := master.Do("EXISTS", key(i))
				require.NoError(t, err)
				assert.Equal(t, "1", at, "%s is at the Sentinel shard's master", key(i))
				left, err := plain.Do("EXISTS", key(i))
				require.NoError(t, err)
				assert.Equal(t, "0", left, "%s left the old owner", key(i))
			}
		})
	}
}

// A migration whose other topology has Sentinel shards, or that would read
// Sentinel shards from replicas, is refused with a clear error instead of
// routing keys to the shards' placeholder addresses (which never resolve)
// or MIGRATEing keys to read-only replicas.
func TestMigrationRefusesSentinelShardsItCannotFollow(t *testing.T) {
	sent := shard.Config{
		Shards:   []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: []string{"127.0.0.1:1"}, Shards: []shard.SentinelShard{{Name: "s0", MasterName: "m0"}}},
	}
	plain := shard.Config{Shards: []ring.Shard{{Name: "p0", Addr: "127.0.0.1:2", Weight: 1}}}
	require.NoError(t, sent.Validate())
	require.NoError(t, plain.Validate())
	replicaReads := sent
	replicaReads.Sentinel.ReadFrom = shard.ReadReplicaLatency

	with := func(cfg, from shard.Config) shard.Config {
		cfg.Migration = &shard.Migration{From: &from, Armed: true}
		return cfg
	}
	cases := []struct {
		name string
		cfg  shard.Config
	}{
		{"from a Sentinel ring", with(plain, sent)},
		{"Sentinel replica reads", with(replicaReads, plain)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			require.ErrorIs(t, err, shard.ErrBadConfig)
			assert.Contains(t, err.Error(), "Sentinel")
			_, err = shard.New(context.Background(), tc.cfg)
			require.ErrorIs(t, err, shard.ErrBadConfig)
		})
	}
	t.Run("StartMigration to a Sentinel ring", func(t *testing.T) {
		server := redistest.StartNTB(t, 1, redistest.Options{})[0]
		c := newClient(t, ringConfig([]*redistest.Server{server}))
		err := c.StartMigration(context.Background(), sent)
		require.ErrorIs(t, err, shard.ErrMigration)
		assert.Contains(t, err.Error(), "Sentinel")
		_, on := c.Migration()
		assert.False(t, on, "the client still routes by its own topology alone")
		_, err = c.Do(context.Background(), "SET", "still-here", 1)
		require.NoError(t, err)
		got, err := server.Do("GET", "still-here")
		require.NoError(t, err)
		assert.Equal(t, "1", got)
	})
}

// A command whose key could not be moved (its old owner is down) fails
// with *MigrateError and stays failed: the Sentinel shard's failover
// retry must not send it to the new owner without the move, where a GET
// finds nothing and an INCR starts from zero while the value sits at the
// old owner.
func TestMigrationFailureIsNotRetriedWithoutTheMove(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 1})
	plain := redistest.StartNTB(t, 1, redistest.Options{})[0]
	po := pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second}
	cfg := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Timeout: time.Second, FailoverWait: 3 * time.Second,
			Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Shards[0].Name}}}}
	from := shard.Config{Pool: po, Shards: []ring.Shard{{Name: "old", Addr: plain.Addr, Weight: 1}}}
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	_, err := plain.Do("SET", "stuck", "10")
	require.NoError(t, err)
	c := newClient(t, cfg)
	require.NoError(t, plain.Kill())

	cases := []struct {
		name string
		args []any
	}{
		{"GET", []any{"stuck"}},
		{"INCR", []any{"stuck"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := c.Do(context.Background(), tc.name, tc.args...)
			var me *shard.MigrateError
			require.ErrorAs(t, err, &me, "reply %v", v)
			assert.Equal(t, plain.Addr, me.From.Addr)
			assert.Nil(t, v)
		})
	}
	master, err := set.Master(0)
	require.NoError(t, err)
	n, err := master.Do("EXISTS", "stuck")
	require.NoError(t, err)
	assert.Equal(t, "0", n, "nothing ran at the new owner")
}

// Close, with a migration away from a Sentinel ring, a subscription and
// its receive loop all live, returns promptly and leaves no connection
// behind on any server: pooled ones, the migration's beacons (named by the
// convention) and the subscription's. goleak (TestMain) checks goroutines.
func TestCloseWithSentinelMigrationAndSubscription(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 1})
	plain := redistest.StartNTB(t, 1, redistest.Options{})[0]
	po := pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second, ClientName: shard.AutoClientName}
	cfg := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: 50 * time.Millisecond},
		Shards: []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Timeout: time.Second,
			Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Shards[0].Name}}}}
	to := shard.Config{Pool: po, Shards: []ring.Shard{{Name: "new", Addr: plain.Addr, Weight: 1}}}
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	_, err = c.Do(ctx, "SET", "closing", 1)
	require.NoError(t, err)
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	_, err = c.Do(ctx, "GET", "closing") // moved to the plain server
	require.NoError(t, err)
	sub, err := c.Subscribe(ctx, "close-chan")
	require.NoError(t, err)
	recvDone := make(chan error, 1)
	go func() {
		for {
			if _, err := sub.Receive(ctx); err != nil {
				recvDone <- err
				return
			}
		}
	}()
	master, err := set.Master(0)
	require.NoError(t, err)
	servers := []*redistest.Server{master, plain}
	waitFor(t, 10*time.Second, "a beacon on the old master", func() bool {
		return strings.Contains(mustDo(t, master, "CLIENT", "LIST"), ":migrating:")
	})

	start := time.Now()
	require.NoError(t, c.Close())
	assert.Less(t, time.Since(start), 5*time.Second, "Close returns promptly")
	select {
	case err := <-recvDone:
		require.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription's Receive did not end with Close")
	}
	waitFor(t, 10*time.Second, "every shardis connection to close", func() bool {
		for _, s := range servers {
			if strings.Contains(mustDo(t, s, "CLIENT", "LIST"), "name=shardis:") {
				return false
			}
		}
		return true
	})
}

func mustDo(t *testing.T, s *redistest.Server, args ...string) string {
	t.Helper()
	out, err := s.Do(args...)
	require.NoError(t, err)
	return out
}
