package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestSentinelPipelineReadAfterRetriedWriteSeesIt: a pipeline that writes
// a key and then reads it on a master demoted behind the client's back
// (its Sentinels are dead, so only the READONLY reply tells) has its
// write refused there and, with FailoverWait, sent again to the new
// master; the read that followed it must see it, as the pipeline's order
// promises. Before, the read kept the answer the demoted master gave
// before the write ran: the old value, next to an OK for the write.
func TestSentinelPipelineReadAfterRetriedWriteSeesIt(t *testing.T) {
	set, cfg := loneSentinel(t) // only the READONLY reply triggers a query
	cfg.Sentinel.FailoverWait = 10 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	const key = "pipeorder"
	_, err := c.Do(ctx, "SET", key, "1")
	require.NoError(t, err)
	replica, err := set.Replica(0)
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the replica to have the key", func() bool {
		v, err := replica.Do("GET", key)
		return err == nil && v == "1"
	})
	_, next := unseenFailover(t, set)

	p := c.Pipeline()
	p.Send("SET", key, "2")
	p.Send("GET", key)
	p.Send("INCR", key)
	p.Send("GET", key)
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 4)
	for i, r := range res {
		require.NoError(t, r.Err, "command %d", i)
	}
	require.Equal(t, "OK", res[0].Reply)
	got, err := redis.String(res[1].Reply, nil)
	require.NoError(t, err)
	require.Equal(t, "2", got, "the read after the write sees it")
	require.Equal(t, int64(3), res[2].Reply)
	got, err = redis.String(res[3].Reply, nil)
	require.NoError(t, err)
	require.Equal(t, "3", got, "the read after the INCR sees it")
	v, err := next.Do("GET", key)
	require.NoError(t, err)
	require.Equal(t, "3", v)
}

// TestSentinelPipelineReadKeepsItsReplyWhenTheWriteGivesUp: when the write
// before a read is refused with READONLY until FailoverWait runs out (no
// new master can be found: the Sentinels are dead and the demoted master
// replicates from a server that is not there), the write fails with a
// *RetryError and the read keeps the reply it had, without an error: it
// was only to be sent again for the write's sake.
func TestSentinelPipelineReadKeepsItsReplyWhenTheWriteGivesUp(t *testing.T) {
	set, cfg := loneSentinel(t)
	cfg.Sentinel.FailoverWait = 500 * time.Millisecond
	c := newClient(t, cfg)
	ctx := context.Background()
	const key = "pipeorder:gaveup"
	_, err := c.Do(ctx, "SET", key, "1")
	require.NoError(t, err)
	require.NoError(t, set.Sentinels[0].Kill())
	m, err := set.Master(0)
	require.NoError(t, err)
	nowhere := redistest.StartTB(t, redistest.Options{})
	require.NoError(t, nowhere.Kill()) // a port with no server
	_, err = m.Do("REPLICAOF", "127.0.0.1", fmt.Sprint(nowhere.Port))
	require.NoError(t, err)

	p := c.Pipeline()
	p.Send("SET", key, "2")
	p.Send("GET", key)
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 2)
	require.ErrorIs(t, res[0].Err, shard.ErrRetryBudget)
	require.NoError(t, res[1].Err)
	got, err := redis.String(res[1].Reply, nil)
	require.NoError(t, err)
	require.Equal(t, "1", got)
}
