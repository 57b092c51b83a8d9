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

// TestReview5DumpMoveKeepsAnOperatorsPause: an operator paused the old
// node's writes (CLIENT PAUSE ... WRITE, say before promoting its replica).
// Redis keeps one pause for every CLIENT PAUSE, so the DUMP/RESTORE
// path's CLIENT UNPAUSE lifted the operator's pause with its own: writes
// the operator held back ran on the old master. The batch must wait for
// the operator's pause to end, and fail when it does not, leaving it on.
func TestReview5DumpMoveKeepsAnOperatorsPause(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, err := shard.ParseURL("redis-ring://" + servers[0].Addr + "?names=a")
	require.NoError(t, err)
	to, err := shard.ParseURL("redis-ring://" + servers[1].Addr + "?names=b")
	require.NoError(t, err)
	pools, err := pool.NewSet(moverPool(to.Pool))
	require.NoError(t, err)
	defer pools.Close()
	m := &mover{opts: Options{From: from, To: to, Dump: true, Timeout: time.Second}.withDefaults(), pools: pools, flows: map[[2]string]*Flow{}}
	src := shard.Node{Name: "a", Addr: servers[0].Addr}
	dst := shard.Node{Name: "b", Addr: servers[1].Addr}
	_, err = servers[0].Do("SET", "k", "v")
	require.NoError(t, err)
	conn, err := pools.Get(ctx, src.Addr)
	require.NoError(t, err)
	defer conn.Close()

	_, err = servers[0].Do("CLIENT", "PAUSE", "60000", "WRITE") // the operator's
	require.NoError(t, err)
	defer servers[0].Do("CLIENT", "UNPAUSE")

	_, err = m.dumpMove(ctx, conn, src, dst, []string{"k"})
	require.Error(t, err, "the old node's writes stayed paused by someone else")
	var nerr *shard.NodeError
	require.True(t, errors.As(err, &nerr), "a NodeError names the old node: %v", err)
	require.Equal(t, src.Addr, nerr.Node.Addr)
	n, err := servers[1].Do("EXISTS", "k")
	require.NoError(t, err)
	require.Equal(t, "0", n, "nothing moved")

	// The operator's pause is still on: a write waits (CLIENT LIST flag b).
	w, err := redis.Dial("tcp", servers[0].Addr, redis.DialReadTimeout(time.Minute))
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Do("CLIENT", "SETNAME", "review5-writer")
	require.NoError(t, err)
	wrote := make(chan error, 1)
	go func() {
		_, err := w.Do("SET", "w", "1")
		wrote <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for held := false; !held; {
		select {
		case err := <-wrote:
			t.Fatalf("a write ran on the old node (err %v): the mover lifted the operator's pause", err)
		default:
		}
		list, err := servers[0].Do("CLIENT", "LIST")
		require.NoError(t, err)
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, "name=review5-writer ") && strings.Contains(line, "cmd=set ") && strings.Contains(line, "flags=b") {
				held = true
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer neither wrote nor waited within 30s:\n%s", list)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err = servers[0].Do("CLIENT", "UNPAUSE")
	require.NoError(t, err)
	require.NoError(t, <-wrote, "the write runs once the operator lifts the pause")
}
