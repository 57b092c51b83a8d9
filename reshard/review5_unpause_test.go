package reshard

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// TestReview5DumpMoveReportsAFailedUnpauseOfAnEmptyBatch: a DUMP/RESTORE
// batch whose keys were all gone by the time of their DUMP (deleted,
// expired or moved by a client since the scan) ended without a word when
// its CLIENT UNPAUSE failed, leaving the old node's writes held until the
// pause ran out; the batch must fail like one whose keys were there.
func TestReview5DumpMoveReportsAFailedUnpauseOfAnEmptyBatch(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pw"},
		{Name: "mover", Password: "mover-pw", Rules: "~* &* +@all -client|unpause"},
	}})
	from, err := shard.ParseURL("redis-ring://mover:mover-pw@" + servers[0].Addr + "?names=a")
	require.NoError(t, err)
	to, err := shard.ParseURL("redis-ring://mover:mover-pw@" + servers[1].Addr + "?names=b")
	require.NoError(t, err)
	pools, err := pool.NewSet(moverPool(to.Pool))
	require.NoError(t, err)
	t.Cleanup(func() { pools.Close() })
	m := &mover{opts: Options{From: from, To: to, Dump: true, Timeout: 2 * time.Second}.withDefaults(), pools: pools, flows: map[[2]string]*Flow{}}
	src := shard.Node{Name: "a", Addr: servers[0].Addr}
	dst := shard.Node{Name: "b", Addr: servers[1].Addr}
	conn, err := pools.Get(ctx, src.Addr)
	require.NoError(t, err)
	defer conn.Close()

	// With a key there, the failed unpause fails the batch (as it did).
	_, err = servers[0].Do("SET", "there", "v")
	require.NoError(t, err)
	_, err = m.dumpMove(ctx, conn, src, dst, []string{"there"})
	requireNoPermUnpause(t, err)
	_, err = servers[0].Do("CLIENT", "UNPAUSE") // as admin: the pause left on by the mover
	require.NoError(t, err)

	// With none of its keys left, it must fail too.
	moved, err := m.dumpMove(ctx, conn, src, dst, []string{"gone1", "gone2"})
	require.Equal(t, 0, moved)
	requireNoPermUnpause(t, err)
}

func requireNoPermUnpause(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err, "the CLIENT UNPAUSE was refused: the old node's writes stay paused")
	var nerr *shard.NodeError
	require.True(t, errors.As(err, &nerr), "a NodeError names the old node: %v", err)
	var rerr redis.Error
	require.True(t, errors.As(err, &rerr), "the server's reply is matchable: %v", err)
	require.True(t, strings.HasPrefix(string(rerr), "NOPERM"), "the server's reply: %q", rerr)
	require.Contains(t, err.Error(), "UNPAUSE")
}
