package reshard

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// hookConn calls hook once, right after the at-th reply (1-based) was
// received on the connection it wraps.
type hookConn struct {
	redis.Conn
	n, at int
	hook  func()
}

func (h *hookConn) after() {
	h.n++
	if h.n == h.at {
		h.hook()
	}
}

func (h *hookConn) Receive() (any, error) {
	r, err := h.Conn.Receive()
	h.after()
	return r, err
}

func (h *hookConn) ReceiveWithTimeout(d time.Duration) (any, error) {
	r, err := h.Conn.(redis.ConnWithTimeout).ReceiveWithTimeout(d)
	h.after()
	return r, err
}

func (h *hookConn) ReceiveContext(ctx context.Context) (any, error) {
	r, err := h.Conn.(redis.ConnWithContext).ReceiveContext(ctx)
	h.after()
	return r, err
}

func (h *hookConn) DoWithTimeout(d time.Duration, cmd string, args ...any) (any, error) {
	return h.Conn.(redis.ConnWithTimeout).DoWithTimeout(d, cmd, args...)
}

func (h *hookConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	return h.Conn.(redis.ConnWithContext).DoContext(ctx, cmd, args...)
}

// dumpRig is two servers, a ring on each (a, the old topology, and b, the
// new), and a mover between them moving through DUMP/RESTORE, holding a
// connection to the old server.
type dumpRig struct {
	servers  []*redistest.Server
	from, to shard.Config
	m        *mover
	src, dst shard.Node
	conn     redis.Conn
}

// newDumpRig starts a dumpRig whose mover has timeout (0: the default).
func newDumpRig(t *testing.T, timeout time.Duration) *dumpRig {
	t.Helper()
	r := &dumpRig{servers: redistest.StartNTB(t, 2, redistest.Options{})}
	var err error
	r.from, err = shard.ParseURL("redis-ring://" + r.servers[0].Addr + "?names=a")
	require.NoError(t, err)
	r.to, err = shard.ParseURL("redis-ring://" + r.servers[1].Addr + "?names=b")
	require.NoError(t, err)
	pools, err := pool.NewSet(moverPool(r.to.Pool))
	require.NoError(t, err)
	t.Cleanup(func() { pools.Close() })
	r.m = &mover{opts: Options{From: r.from, To: r.to, Dump: true, Timeout: timeout}.withDefaults(), pools: pools, flows: map[[2]string]*Flow{}}
	r.src = shard.Node{Name: "a", Addr: r.servers[0].Addr}
	r.dst = shard.Node{Name: "b", Addr: r.servers[1].Addr}
	r.conn, err = pools.Get(context.Background(), r.src.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { r.conn.Close() })
	return r
}

// TestDumpMoveKeepsAKeyMovedAndDeletedMeanwhile: between the mover's DUMP
// of a key and its RESTORE, a migrating client increments the key (its
// MIGRATE moves it, the INCR runs at the new owner) and deletes it. The
// RESTORE must not bring the dumped value back: both acknowledged writes
// would be undone. The mover pauses the old node's writes for the batch,
// so the client's MIGRATE waits for the RESTORE and meets its copy.
func TestDumpMoveKeepsAKeyMovedAndDeletedMeanwhile(t *testing.T) {
	ctx := context.Background()
	r := newDumpRig(t, 0)
	_, err := r.servers[0].Do("SET", "k", "10")
	require.NoError(t, err)
	cfg := r.to
	cfg.Migration = &shard.Migration{From: &r.from, Armed: true}
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	defer c.Close()

	done := make(chan error, 1)
	var incr int
	hc := &hookConn{Conn: r.conn, at: 2, hook: func() { // after the replies to DUMP k and PTTL k
		go func() {
			var err error
			incr, err = redis.Int(c.Do(ctx, "INCR", "k"))
			if err == nil {
				_, err = c.Do(ctx, "DEL", "k")
			}
			done <- err
		}()
		// Let the client's writes run first, if they can: without the
		// pause they end within milliseconds, before the RESTORE.
		select {
		case err := <-done:
			done <- err
		case <-time.After(300 * time.Millisecond):
		}
	}}
	moved, err := r.m.dumpMove(ctx, hc, r.src, r.dst, []string{"k"})
	require.NoError(t, err)
	require.Equal(t, 1, moved, "the RESTORE of k ran before the client's MIGRATE")
	require.NoError(t, <-done)
	require.Equal(t, 11, incr, "the INCR saw the moved value")
	for _, s := range r.servers {
		n, err := s.Do("EXISTS", "k")
		require.NoError(t, err)
		require.Equal(t, "0", n, "the key was deleted after its INCR, yet %s has it", s.Addr)
	}
}

// TestDumpMoveFailsRatherThanOutlastItsPause: a batch whose replies would
// come after the old node's writes resumed by themselves fails with
// ErrPauseOver and moves nothing.
func TestDumpMoveFailsRatherThanOutlastItsPause(t *testing.T) {
	ctx := context.Background()
	r := newDumpRig(t, time.Second) // the pause lasts Timeout plus a second: 2s
	for i := 0; i < 3; i++ {
		_, err := r.servers[0].Do("SET", fmt.Sprintf("k%d", i), "v")
		require.NoError(t, err)
	}
	hc := &hookConn{Conn: r.conn, at: 2, hook: func() { time.Sleep(2100 * time.Millisecond) }} // after k0's DUMP and PTTL
	_, err := r.m.dumpMove(ctx, hc, r.src, r.dst, []string{"k0", "k1", "k2"})
	require.ErrorIs(t, err, ErrPauseOver)
	for i := 0; i < 3; i++ {
		n, err := r.servers[0].Do("EXISTS", fmt.Sprintf("k%d", i))
		require.NoError(t, err)
		require.Equal(t, "1", n, "k%d stays at the old node", i)
	}
}
