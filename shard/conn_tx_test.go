package shard_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connModes returns a client on a 3-shard ring and one on the shared 3+3
// cluster, and for each a function that returns two keys on different
// nodes (ring) or slots (cluster), found by asking the servers.
func connModes(t *testing.T) []struct {
	name  string
	c     *shard.Client
	apart func(prefix string) (string, string)
} {
	t.Helper()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	ring := newClient(t, ringConfig(servers))
	rc := clusterForTest(t)
	cl := newClient(t, clusterConfig(rc.Seeds()...))
	ringApart := func(prefix string) (string, string) {
		// Store keys through the client and ask the servers which holds
		// which, until two are on different servers.
		owner := map[string]int{}
		for i := 0; i < 64; i++ {
			k := fmt.Sprintf("%s:%d", prefix, i)
			_, err := ring.Do(context.Background(), "SET", k, 0)
			require.NoError(t, err)
			for si, s := range servers {
				if n, _ := s.Do("EXISTS", k); n == "1" {
					owner[k] = si
				}
			}
			first := fmt.Sprintf("%s:0", prefix)
			if owner[k] != owner[first] {
				return first, k
			}
		}
		t.Fatal("no two keys on different servers")
		return "", ""
	}
	clusterApart := func(prefix string) (string, string) {
		a, b := "{"+prefix+"a}x", "{"+prefix+"b}y"
		sa, err := rc.Nodes[0].Do("CLUSTER", "KEYSLOT", a)
		require.NoError(t, err)
		sb, err := rc.Nodes[0].Do("CLUSTER", "KEYSLOT", b)
		require.NoError(t, err)
		require.NotEqual(t, sa, sb)
		return a, b
	}
	return []struct {
		name  string
		c     *shard.Client
		apart func(prefix string) (string, string)
	}{{"ring", ring, ringApart}, {"cluster", cl, clusterApart}}
}

// redigo's documented transaction, on Conn: atomic on one node (a
// concurrent reader never sees half of it), and refused as a whole before
// anything runs when its keys are on different nodes.
func TestConnMultiExec(t *testing.T) {
	ctx := context.Background()
	for _, m := range connModes(t) {
		t.Run(m.name+"/atomic", func(t *testing.T) {
			a, b := "{cmx}a", "{cmx}b"
			_, err := m.c.Do(ctx, "MSET", a, 0, b, 0)
			require.NoError(t, err)
			var (
				stop   atomic.Bool
				wg     sync.WaitGroup
				reads  atomic.Int64
				halves atomic.Int64
				rerr   atomic.Value
			)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					vs, err := redis.Int64s(m.c.Do(ctx, "MGET", a, b))
					if err != nil {
						rerr.Store(err)
						return
					}
					reads.Add(1)
					if len(vs) != 2 || vs[0] != vs[1] {
						halves.Add(1)
					}
				}
			}()
			conn := m.c.Conn()
			defer conn.Close()
			for i := 1; i <= 200; i++ {
				var vals []int64
				if i%2 == 0 { // queued with Send, run by Do("EXEC")
					require.NoError(t, conn.Send("MULTI"))
					require.NoError(t, conn.Send("INCR", a))
					require.NoError(t, conn.Send("INCR", b))
					vals, err = redis.Int64s(conn.Do("EXEC"))
				} else { // one Do at a time
					var s string
					s, err = redis.String(conn.Do("MULTI"))
					require.NoError(t, err)
					require.Equal(t, "OK", s)
					for _, k := range []string{a, b} {
						s, err = redis.String(conn.Do("INCR", k))
						require.NoError(t, err)
						require.Equal(t, "QUEUED", s)
					}
					vals, err = redis.Int64s(conn.Do("EXEC"))
				}
				require.NoError(t, err)
				require.Equal(t, []int64{int64(i), int64(i)}, vals)
			}
			stop.Store(true)
			wg.Wait()
			if v := rerr.Load(); v != nil {
				t.Fatalf("reader: %v", v)
			}
			assert.Positive(t, reads.Load())
			assert.Zero(t, halves.Load(), "a reader saw half a transaction")
			require.NoError(t, conn.Err())
		})

		t.Run(m.name+"/cross-node refused", func(t *testing.T) {
			x, y := m.apart("cmr")
			_, err := m.c.Do(ctx, "MSET", x, 10, y, 20)
			require.NoError(t, err)
			unchanged := func() {
				t.Helper()
				vs, err := redis.Int64s(m.c.Do(ctx, "MGET", x, y))
				require.NoError(t, err)
				require.Equal(t, []int64{10, 20}, vs, "the refused transaction ran")
			}
			conn := m.c.Conn()
			defer conn.Close()

			// Queued with Send: refused before anything is written.
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("INCR", x))
			require.NoError(t, conn.Send("INCR", y))
			_, err = conn.Do("EXEC")
			require.ErrorIs(t, err, shard.ErrCrossShard)
			unchanged()
			require.NoError(t, conn.Err())

			// The same with Flush and Receive: every reply is the error.
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("INCR", x))
			require.NoError(t, conn.Send("INCR", y))
			require.NoError(t, conn.Send("EXEC"))
			require.NoError(t, conn.Flush())
			for i := 0; i < 4; i++ {
				_, err := conn.Receive()
				require.ErrorIs(t, err, shard.ErrCrossShard, "reply %d", i)
			}
			unchanged()

			// One Do at a time: the commands queued on the server are
			// discarded, and nothing up to EXEC runs.
			s, err := redis.String(conn.Do("MULTI"))
			require.NoError(t, err)
			require.Equal(t, "OK", s)
			s, err = redis.String(conn.Do("INCR", x))
			require.NoError(t, err)
			require.Equal(t, "QUEUED", s)
			_, err = conn.Do("INCR", y)
			require.ErrorIs(t, err, shard.ErrCrossShard)
			_, err = conn.Do("INCR", x)
			require.ErrorIs(t, err, shard.ErrCrossShard)
			_, err = conn.Do("EXEC")
			require.ErrorIs(t, err, shard.ErrCrossShard)
			unchanged()

			// WATCH pins too: a transaction on another node is refused.
			_, err = conn.Do("WATCH", x)
			require.NoError(t, err)
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("INCR", y))
			_, err = conn.Do("EXEC")
			require.ErrorIs(t, err, shard.ErrCrossShard)
			unchanged()

			// The Conn still works.
			v, err := redis.Int(conn.Do("INCR", x))
			require.NoError(t, err)
			assert.Equal(t, 11, v)
		})

		t.Run(m.name+"/watch", func(t *testing.T) {
			k := "{cmw}k"
			_, err := m.c.Do(ctx, "SET", k, 1)
			require.NoError(t, err)
			conn := m.c.Conn()
			defer conn.Close()
			// Watched and changed by someone else: EXEC runs nothing.
			_, err = conn.Do("WATCH", k)
			require.NoError(t, err)
			v, err := redis.Int(conn.Do("GET", k))
			require.NoError(t, err)
			require.Equal(t, 1, v)
			_, err = m.c.Do(ctx, "SET", k, 5)
			require.NoError(t, err)
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("INCR", k))
			reply, err := conn.Do("EXEC")
			require.NoError(t, err)
			assert.Nil(t, reply, "EXEC after a watched key changed")
			v, err = redis.Int(m.c.Do(ctx, "GET", k))
			require.NoError(t, err)
			assert.Equal(t, 5, v)
			// Not changed: EXEC runs it.
			_, err = conn.Do("WATCH", k)
			require.NoError(t, err)
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("INCR", k))
			vals, err := redis.Ints(conn.Do("EXEC"))
			require.NoError(t, err)
			assert.Equal(t, []int{6}, vals)
			// UNWATCH ends the pin: a transaction elsewhere is fine.
			_, err = conn.Do("WATCH", k)
			require.NoError(t, err)
			_, err = conn.Do("UNWATCH")
			require.NoError(t, err)
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("SET", "{cmw2}other", 1))
			_, err = conn.Do("EXEC")
			require.NoError(t, err)
		})
	}
}

// PING, ECHO, SELECT and QUIT have a meaning on Conn.
func TestConnKeylessCommands(t *testing.T) {
	for _, m := range connModes(t) {
		t.Run(m.name, func(t *testing.T) {
			conn := m.c.Conn()
			s, err := redis.String(conn.Do("PING"))
			require.NoError(t, err)
			assert.Equal(t, "PONG", s)
			s, err = redis.String(conn.Do("PING", "hi"))
			require.NoError(t, err)
			assert.Equal(t, "hi", s)
			s, err = redis.String(conn.Do("ECHO", "hello"))
			require.NoError(t, err)
			assert.Equal(t, "hello", s)
			s, err = redis.String(conn.Do("SELECT", 0))
			require.NoError(t, err)
			assert.Equal(t, "OK", s)
			_, err = conn.Do("SELECT", 1)
			require.ErrorIs(t, err, shard.ErrConnState)
			_, err = conn.Do("SUBSCRIBE", "ch")
			require.ErrorIs(t, err, shard.ErrConnState)
			assert.Contains(t, err.Error(), "Client.Subscribe")
			_, err = conn.Do("MONITOR")
			require.ErrorIs(t, err, shard.ErrConnState)
			_, err = conn.Do("FLUSHALL")
			require.ErrorIs(t, err, shard.ErrNoKey)
			assert.Contains(t, err.Error(), "ForEachShard")
			require.NoError(t, conn.Err())
			s, err = redis.String(conn.Do("QUIT"))
			require.NoError(t, err)
			assert.Equal(t, "OK", s)
			assert.Error(t, conn.Err())
			_, err = conn.Do("PING")
			assert.Error(t, err)
		})
	}
}

// PubSubConn over Conn fails with a clear error naming the subscription
// API; ReceiveWithTimeout reaches it (ConnWithTimeout).
func TestConnPubSubIsRefused(t *testing.T) {
	c, _ := startRing(t, 1)
	psc := redis.PubSubConn{Conn: c.Conn()}
	defer psc.Close()
	require.NoError(t, psc.Subscribe("news"))
	switch v := psc.ReceiveWithTimeout(0).(type) {
	case error:
		require.ErrorIs(t, v, shard.ErrConnState)
		assert.Contains(t, v.Error(), "Client.Subscribe")
	default:
		t.Fatalf("got %#v, want an error", v)
	}
}

// The edges of a Conn's transaction: what comes before a key, an empty
// transaction, EXEC without MULTI, RESET and Close in the middle, a
// nested MULTI. No connection is left in MULTI or WATCH afterwards.
func TestConnTransactionEdges(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = stateClientName
	cfg.Pool.MaxIdle = 1 // one connection per node, reused by every caller
	cfg.Health.Interval = -1
	baseline := clientIDs(t, servers)
	c := newClient(t, cfg)
	ctx := context.Background()
	conn := c.Conn()
	defer conn.Close()

	// An empty transaction: nothing to run anywhere.
	require.NoError(t, conn.Send("MULTI"))
	v, err := conn.Do("EXEC")
	require.NoError(t, err)
	assert.Equal(t, []any{}, v)

	// EXEC and DISCARD without MULTI.
	_, err = conn.Do("EXEC")
	require.ErrorIs(t, err, shard.ErrBadCommand)
	_, err = conn.Do("DISCARD")
	require.ErrorIs(t, err, shard.ErrBadCommand)

	// A keyless command before the transaction's first key: its node
	// cannot be known, so the transaction is refused.
	s, err := redis.String(conn.Do("MULTI"))
	require.NoError(t, err)
	assert.Equal(t, "OK", s)
	_, err = conn.Do("PING")
	require.ErrorIs(t, err, shard.ErrNoKey)
	_, err = conn.Do("INCR", "{e}k")
	require.ErrorIs(t, err, shard.ErrNoKey)
	_, err = conn.Do("EXEC")
	require.ErrorIs(t, err, shard.ErrNoKey)
	n, err := redis.Int(c.Do(ctx, "EXISTS", "{e}k"))
	require.NoError(t, err)
	assert.Equal(t, 0, n, "a command of the refused transaction ran")

	// After its first key, keyless commands go with the transaction.
	require.NoError(t, conn.Send("MULTI"))
	require.NoError(t, conn.Send("INCR", "{e}k"))
	require.NoError(t, conn.Send("PING"))
	vals, err := redis.Values(conn.Do("EXEC"))
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1), "PONG"}, vals)

	// A nested MULTI fails alone; the transaction goes on.
	_, err = conn.Do("MULTI")
	require.NoError(t, err)
	_, err = conn.Do("INCR", "{e}k")
	require.NoError(t, err)
	_, err = conn.Do("MULTI")
	require.ErrorIs(t, err, shard.ErrBadCommand)
	vals, err = redis.Values(conn.Do("EXEC"))
	require.NoError(t, err)
	assert.Equal(t, []any{int64(2)}, vals)

	// RESET in the middle ends the transaction; nothing of it runs.
	_, err = conn.Do("MULTI")
	require.NoError(t, err)
	_, err = conn.Do("INCR", "{e}k")
	require.NoError(t, err)
	s, err = redis.String(conn.Do("RESET"))
	require.NoError(t, err)
	assert.Equal(t, "RESET", s)
	_, err = conn.Do("EXEC")
	require.ErrorIs(t, err, shard.ErrBadCommand)
	n, err = redis.Int(c.Do(ctx, "GET", "{e}k"))
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	// Close in the middle of WATCH and of MULTI: nothing runs and the
	// connections come back clean (command names in any case).
	for _, open := range [][]string{{"Watch"}, {"Watch", "Multi"}, {"Multi"}} {
		cc := c.Conn()
		for _, cmd := range open {
			args := []any{"{e}k"}
			if cmd == "Multi" {
				args = nil
			}
			_, err := cc.Do(cmd, args...)
			require.NoError(t, err)
		}
		if open[len(open)-1] == "Multi" {
			s, err := redis.String(cc.Do("INCR", "{e}k"))
			require.NoError(t, err)
			assert.Equal(t, "QUEUED", s)
		}
		require.NoError(t, cc.Close())
	}
	n, err = redis.Int(c.Do(ctx, "GET", "{e}k"))
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	waitClean(t, servers, baseline)
	// Had a connection gone back still watching {e}k, a change of it would
	// abort the next transaction on that connection, on another key.
	for _, s := range servers {
		_, err := s.Do("SET", "{e}k", "changed")
		require.NoError(t, err)
	}
	require.NoError(t, conn.Send("MULTI"))
	require.NoError(t, conn.Send("INCR", "{e}j"))
	vals, err = redis.Values(conn.Do("EXEC"))
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1)}, vals)
}
