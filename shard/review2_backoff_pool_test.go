package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Tx that keeps meeting TRYAGAIN waits 5, 10, 20, 40, 80 ms and then
// 100 ms between attempts for as long as MaxRetryWait allows. Its backoff
// used to double without bound and overflow after about 40 waits (some
// 4 s), after which the rest of the budget was a busy loop on the node.
func TestReview2TxBackoffStaysBoundedOverALongWait(t *testing.T) {
	ctx := context.Background()
	const wait = 7 * time.Second
	c, tag := tryAgainClient(t, wait, "review2txbackoff")
	// One key is on the source, one is not: the WATCH of both meets
	// TRYAGAIN until the budget is spent.
	start := time.Now()
	_, err := c.Tx(ctx, []string{tag + "1", tag + "2"}, func(tx *shard.Tx) error {
		return tx.Queue("GET", tag+"1")
	})
	took := time.Since(start)
	re := requireBoundedRetries(t, err, took, wait)
	assert.Contains(t, re.Last, "TRYAGAIN")
}

// A Sentinel shard whose master and replica are both gone makes a command
// wait for a new master for FailoverWait, with the same bounded backoff:
// it used to overflow after about 4 s into a busy loop.
func TestReview2SentinelBackoffStaysBoundedOverALongWait(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	const wait = 7 * time.Second
	cfg.Sentinel.FailoverWait = wait
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "k", "v")
	require.NoError(t, err)
	for _, s := range set.Shards[0].Nodes {
		require.NoError(t, s.Kill())
	}
	start := time.Now()
	_, err = c.Do(ctx, "GET", "k")
	took := time.Since(start)
	requireBoundedRetries(t, err, took, wait)
}

// A full pool (MaxActive reached, no Wait) fails a command on a Sentinel
// shard before it is sent: final at once, as in ring and cluster mode, not
// an *UnknownOutcomeError for a write nor a wait of FailoverWait for a
// read. Hooks report it as a failure, in cluster mode too, as the caller
// gets it.
func TestReview2FullPoolIsFinalOnSentinelShardsAndInHooks(t *testing.T) {
	t.Run("sentinel", func(t *testing.T) {
		set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
		cfg := sentinelConfig(set)
		cfg.Sentinel.FailoverWait = 6 * time.Second
		fullPoolCase(t, cfg, "{full}")
	})
	t.Run("cluster", func(t *testing.T) {
		rc := clusterForTest(t)
		cfg := clusterConfig(rc.Seeds()...)
		cfg.Cluster.MaxRetryWait = 6 * time.Second
		fullPoolCase(t, cfg, "{review2fullhooks}")
	})
}

func fullPoolCase(t *testing.T, cfg shard.Config, tag string) {
	t.Helper()
	ctx := context.Background()
	cfg.Pool.MaxActive = 1
	cfg.Pool.Wait = false
	cfg.DisableAutoPipeline = true
	rec := &recorder{}
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)
	key, other := tag+"a", tag+"b"
	_, err := c.Do(ctx, "DEL", other)
	require.NoError(t, err)
	errStop := errors.New("stop")
	var setErr, getErr error
	var setTook, getTook time.Duration
	// The transaction holds the only connection while its function runs.
	_, err = c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		rec.reset()
		start := time.Now()
		_, setErr = c.Do(ctx, "SET", other, "v")
		setTook = time.Since(start)
		start = time.Now()
		_, getErr = c.Do(ctx, "GET", other)
		getTook = time.Since(start)
		return errStop
	})
	require.ErrorIs(t, err, errStop)
	var uo *shard.UnknownOutcomeError
	for _, r := range []struct {
		name string
		err  error
		took time.Duration
	}{{"SET", setErr, setTook}, {"GET", getErr, getTook}} {
		assert.ErrorIs(t, r.err, redis.ErrPoolExhausted, r.name)
		assert.False(t, errors.As(r.err, &uo), "%s: never sent, yet an unknown outcome: %v", r.name, r.err)
		assert.False(t, errors.Is(r.err, shard.ErrRetryBudget), "%s: retried until the budget ran out: %v", r.name, r.err)
		assert.Less(t, r.took, 2*time.Second, "%s failed at once", r.name)
	}
	got := rec.snapshot()
	var cmds []shard.CommandEvent
	for _, ev := range got.commands {
		if ev.Name == "SET" || ev.Name == "GET" {
			cmds = append(cmds, ev)
		}
	}
	require.Len(t, cmds, 2, "one attempt each")
	for _, ev := range cmds {
		assert.Equal(t, shard.OutcomeFailed, ev.Outcome, "%s attempt: %v", ev.Name, ev.Err)
	}
	n, err := redis.Int(c.Do(ctx, "EXISTS", other))
	require.NoError(t, err)
	assert.Zero(t, n, "nothing was sent")
}
