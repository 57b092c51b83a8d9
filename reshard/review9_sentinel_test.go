package reshard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9MoveIntoASentinelRing: a client may migrate into a ring of
// Sentinel shards (a key moves to the shard's verified master), so the
// mover and Verify must reach those shards too. A Sentinel shard's node
// address names the shard ("sentinel/<name>"), not a server: the mover
// dialled it, and sent it to MIGRATE, as it was, failing with "missing
// port in address", and Verify of any Sentinel ring failed the same way.
func TestReview9MoveIntoASentinelRing(t *testing.T) {
	ctx := context.Background()
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 1})
	plain := redistest.StartNTB(t, 1, redistest.Options{})[0]
	master, err := set.Master(0)
	require.NoError(t, err)
	po := pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second}
	to := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Timeout: time.Second,
			Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Shards[0].Name}}}}
	from := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "old", Addr: plain.Addr, Weight: 1}}}
	const n = 50
	for i := range n {
		_, err := plain.Do("SET", fmt.Sprint("sent:", i), fmt.Sprint("v", i))
		require.NoError(t, err)
	}

	for _, dump := range []bool{false, true} {
		t.Run(fmt.Sprintf("dump=%v", dump), func(t *testing.T) {
			if dump { // the keys go back to the plain server first
				for i := range n {
					_, err := master.Do("MIGRATE", "127.0.0.1", fmt.Sprint(plain.Port), fmt.Sprint("sent:", i), "0", "5000")
					require.NoError(t, err)
				}
			}
			rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, Dump: dump})
			require.NoError(t, err)
			assert.EqualValues(t, n, rep.Moved)
			require.NotNil(t, rep.Verify)
			assert.Zero(t, rep.Verify.Misplaced)
			for i := range n {
				v, err := master.Do("GET", fmt.Sprint("sent:", i))
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprint("v", i), v, "sent:%d at the Sentinel shard's master", i)
				left, err := plain.Do("EXISTS", fmt.Sprint("sent:", i))
				require.NoError(t, err)
				assert.Equal(t, "0", left, "sent:%d left the old server", i)
			}
		})
	}

	v, err := reshard.Verify(ctx, to, reshard.VerifyOptions{Nodes: []string{plain.Addr}})
	require.NoError(t, err)
	assert.EqualValues(t, n, v.Scanned)
	assert.Zero(t, v.Misplaced)

	// A key left on the plain server is reported, judged by the Sentinel
	// shard.
	_, err = plain.Do("SET", "sent:stray", "x")
	require.NoError(t, err)
	v, err = reshard.Verify(ctx, to, reshard.VerifyOptions{Nodes: []string{plain.Addr}})
	require.NoError(t, err)
	assert.EqualValues(t, 1, v.Misplaced)
	require.Len(t, v.Samples, 1)
	assert.Equal(t, "sent:stray", v.Samples[0].Key)
	assert.Equal(t, "sentinel/s0", v.Samples[0].Owner)
}
