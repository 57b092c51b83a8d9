package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// giveUpThenCheckReplies makes a GET give up (its context ends while the
// server is paused), resumes the server and checks that the late reply
// never reaches a later command of c.
func giveUpThenCheckReplies(t *testing.T, c *shard.Client, server *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "cancel:a", "a")
	require.NoError(t, err)

	require.NoError(t, server.Pause())
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Do(short, "GET", "cancel:a")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 500*time.Millisecond, "the caller returns when its context ends")
	require.NoError(t, server.Resume())

	// The abandoned GET's reply ("a") comes first; it must be dropped.
	for i := 0; i < 20; i++ {
		v := fmt.Sprint(i)
		_, err := c.Do(ctx, "SET", "cancel:b", v)
		require.NoError(t, err)
		got, err := redis.String(c.Do(ctx, "GET", "cancel:b"))
		require.NoError(t, err)
		require.Equal(t, v, got, "a reply meant for the cancelled GET came back")
	}
}

// A single command under a context that ends while the server is silent
// returns at once; its connection is closed rather than reused, so the
// late reply never reaches the next command.
func TestCancelledSingleCommandDoesNotShiftReplies(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	giveUpThenCheckReplies(t, newClient(t, ringConfig(servers)), servers[0])
}

// A context that ends after its command has finished, as a request's
// context does when the request is over, leaves the connection alone: it
// goes back to the pool and is reused.
func TestContextEndingAfterTheCommandKeepsTheConnection(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1 // no health checks borrowing connections
	c := newClient(t, cfg)
	for i := 0; i < 200; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := c.Do(ctx, "SET", "reuse:k", i)
		cancel()
		require.NoError(t, err)
	}
	dials := c.Stats().Nodes[0].Pool.Dials
	assert.LessOrEqual(t, dials, int64(2), "one connection, reused, not one per command")
}

// A pipeline over several nodes under a context that is cancelled while
// one node is silent returns at once: the silent node's commands fail
// with context.Canceled, the commands the other nodes answered keep their
// replies, and the connection left with an unread reply is never reused.
func TestCancelledPipelineKeepsTheRepliesThatCame(t *testing.T) {
	c, servers := startRing(t, 3)
	keys := keysByShard(t, c, 4)
	ctx := context.Background()
	for _, ks := range keys {
		for _, k := range ks {
			_, err := c.Do(ctx, "SET", k, k)
			require.NoError(t, err)
		}
	}
	paused := servers[1]
	require.NoError(t, paused.Pause())
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(150*time.Millisecond, cancel)

	p := c.Pipeline()
	var sent []string
	for i := 0; i < 4; i++ { // interleaved, so the paused node is not read last
		for _, s := range servers {
			k := keys[s.Addr][i]
			p.Send("GET", k)
			sent = append(sent, k)
		}
	}
	start := time.Now()
	res, err := p.Exec(cctx)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Second, "the caller returns when its context ends")
	require.Len(t, res, len(sent))
	for i, r := range res {
		n, _ := c.Router().Route(sent[i])
		if n.Addr == paused.Addr {
			assert.ErrorIs(t, r.Err, context.Canceled, "command %d on the silent node", i)
			continue
		}
		require.NoError(t, r.Err, "command %d on a node that answered", i)
		assert.Equal(t, sent[i], string(r.Reply.([]byte)))
	}
	require.NoError(t, paused.Resume())

	// The silent node's late replies must never reach later commands.
	for i := 0; i < 20; i++ {
		v := fmt.Sprint(i)
		k := keys[paused.Addr][0]
		_, err := c.Do(ctx, "SET", k, v)
		require.NoError(t, err)
		got, err := redis.String(c.Do(ctx, "GET", k))
		require.NoError(t, err)
		require.Equal(t, v, got, "a reply meant for the cancelled pipeline came back")
	}
}

// Pipelines over several nodes under a cancellable context that does not
// end reuse their connections, one per node.
func TestCancellablePipelineReusesConnections(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1 // no health checks borrowing connections
	c := newClient(t, cfg)
	keys := keysByShard(t, c, 10)
	for i := 0; i < 100; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		p := c.Pipeline()
		for _, ks := range keys {
			p.Send("SET", ks[i%10], i)
		}
		res, err := p.Exec(ctx)
		cancel()
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}
	}
	for _, st := range c.Stats().Nodes {
		assert.LessOrEqual(t, st.Pool.Dials, int64(2), "%s: one connection, reused", st.Node.Addr)
	}
}
