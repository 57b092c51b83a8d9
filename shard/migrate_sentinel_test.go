package shard_test

import (
	"context"
	"fmt"
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
			cfg.Migration = &shard.Migration{From: &from}
			return newClient(t, cfg)
		}},
		{"back to a Sentinel ring (AbortMigration)", func(t *testing.T, ctx context.Context) *shard.Client {
			c := newClient(t, sentCfg)
			require.NoError(t, c.StartMigration(ctx, plainCfg))
			require.NoError(t, c.AbortMigration(ctx))
			return c
		}},
	}
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
				got, err := c.Do(ctx, "GET", key(i))
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
