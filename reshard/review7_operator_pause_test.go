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

// TestReview7DumpMoveKeepsAPauseTakenDuringTheBatch: an operator pauses
// the old node's writes (CLIENT PAUSE ... WRITE) while a DUMP/RESTORE
// batch holds its own pause. Redis keeps one pause for every CLIENT PAUSE
// (the later end wins) and CLIENT UNPAUSE ends it, so the batch's UNPAUSE
// lifted the operator's pause too, and the writes it held back ran on the
// old master. (review5_operator_pause_test.go covers a pause taken before
// the batch.) The batch must leave the pause on and fail with
// ErrPausedByOther (its old copies cannot be deleted while writes are
// paused), and a write waits until the operator lifts it.
func TestReview7DumpMoveKeepsAPauseTakenDuringTheBatch(t *testing.T) {
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
	defer servers[0].Do("CLIENT", "UNPAUSE")

	var opErr error
	testHookPaused = func() {
		_, opErr = servers[0].Do("CLIENT", "PAUSE", "60000", "WRITE") // the operator's
	}
	defer func() { testHookPaused = nil }()
	_, err = m.dumpMove(ctx, conn, src, dst, []string{"k"})
	require.NoError(t, opErr)
	require.ErrorIs(t, err, ErrPausedByOther)
	var nerr *shard.NodeError
	require.True(t, errors.As(err, &nerr), "a NodeError names the old node: %v", err)
	require.Equal(t, src.Addr, nerr.Node.Addr)
	// Restored at the new node; the old copy, which the paused node
	// cannot delete, stays (the next move keeps the new one).
	n, err := servers[1].Do("EXISTS", "k")
	require.NoError(t, err)
	require.Equal(t, "1", n, "the key at the new node")
	require.EqualValues(t, 0, m.busy.Load(), "busy")

	// The operator's pause is still on: a write waits (CLIENT LIST flag b).
	w, err := redis.Dial("tcp", servers[0].Addr, redis.DialReadTimeout(time.Minute))
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Do("CLIENT", "SETNAME", "review7-writer")
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
			if strings.Contains(line, "name=review7-writer ") && strings.Contains(line, "cmd=set ") && strings.Contains(line, "flags=b") {
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
