package shard_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestConnTxAfterLostWriteReplySaysTheWriteMayHaveRun: on a Conn under
// WATCH, a write sent on the watching connection runs on the node and its
// reply is lost with the connection (the node closes it for a reply over
// its output buffer limit); the caller ignores the *UnknownOutcomeError
// and goes on with MULTI ... EXEC, which the Conn refuses since the
// watched keys are no longer watched. Those refusals must tell that the
// write may have run: they wrap its *UnknownOutcomeError, and stay
// *NodeErrors of the node. Both ways of sending the transaction are
// checked: Do by Do, and Send ... Do("EXEC"); and the write sent in one
// go with the MULTI that follows it.
func TestConnTxAfterLostWriteReplySaysTheWriteMayHaveRun(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	s := servers[0]
	var mu sync.Mutex
	var pipelines []shard.PipelineEvent
	cfg := ringConfig(servers)
	cfg.Hooks = &shard.Hooks{Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
		mu.Lock()
		defer mu.Unlock()
		pipelines = append(pipelines, *ev)
	}}
	c := newClient(t, cfg)
	big := strings.Repeat("z", 256<<10)
	setLimit := func(limit string) {
		t.Helper()
		_, err := s.Do("CONFIG", "SET", "client-output-buffer-limit", limit)
		require.NoError(t, err)
	}
	t.Cleanup(func() { _, _ = s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0") })

	checkLost := func(t *testing.T, what string, err error) {
		t.Helper()
		require.Error(t, err, what)
		var uo *shard.UnknownOutcomeError
		require.ErrorAs(t, err, &uo, "%s hides that the write may have run: %v", what, err)
		require.Equal(t, "RPOPLPUSH", uo.Command)
		var ne *shard.NodeError
		require.ErrorAs(t, err, &ne, what)
		require.Equal(t, s.Addr, ne.Node.Addr)
		require.Contains(t, err.Error(), "RPOPLPUSH", what)
	}

	for _, tc := range []struct {
		name string
		run  func(t *testing.T, conn redis.Conn, w, src, dst string) (lost error, multi, get, exec error)
	}{
		{"do by do", func(t *testing.T, conn redis.Conn, w, src, dst string) (error, error, error, error) {
			_, lost := conn.Do("RPOPLPUSH", src, dst) // ignored
			_, multi := conn.Do("MULTI")
			_, get := conn.Do("GET", w)
			_, exec := conn.Do("EXEC")
			return lost, multi, get, exec
		}},
		{"send then exec", func(t *testing.T, conn redis.Conn, w, src, dst string) (error, error, error, error) {
			_, lost := conn.Do("RPOPLPUSH", src, dst) // ignored
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("GET", w))
			_, exec := conn.Do("EXEC")
			return lost, exec, exec, exec
		}},
		{"read sent with the write", func(t *testing.T, conn redis.Conn, w, src, dst string) (error, error, error, error) {
			// Both on the watching connection, in one run: Do returns
			// the GET's own failure, not the RPOPLPUSH's, so that one
			// must say that the RPOPLPUSH may have run.
			require.NoError(t, conn.Send("RPOPLPUSH", src, dst))
			mu.Lock()
			pipelines = nil
			mu.Unlock()
			_, read := conn.Do("GET", w)
			// The hooks see each command's own outcome: the
			// RPOPLPUSH's is unknown, the GET failed.
			mu.Lock()
			evs := pipelines
			mu.Unlock()
			require.Len(t, evs, 1)
			require.Equal(t, 2, evs[0].Commands)
			require.Equal(t, 1, evs[0].Outcomes[shard.OutcomeUnknown], "%+v", evs[0].Outcomes)
			require.Equal(t, 1, evs[0].Outcomes[shard.OutcomeFailed], "%+v", evs[0].Outcomes)
			checkLost(t, "GET sent with RPOPLPUSH", read)
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("GET", w))
			_, exec := conn.Do("EXEC")
			return nil, exec, exec, exec
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, src, dst := "r15clw:"+tc.name+":w", "r15clw:"+tc.name+":src", "r15clw:"+tc.name+":dst"
			setLimit("normal 0 0 0")
			_, err := c.Do(ctx, "RPUSH", src, big, big)
			require.NoError(t, err)
			conn := c.Conn()
			defer conn.Close()
			_, err = conn.Do("WATCH", w)
			require.NoError(t, err)
			setLimit("normal 64kb 0 0")
			lost, multi, get, exec := tc.run(t, conn, w, src, dst)
			if lost != nil {
				var uo *shard.UnknownOutcomeError
				require.ErrorAs(t, lost, &uo, "RPOPLPUSH with a reply over the output buffer limit")
			}
			checkLost(t, "MULTI", multi)
			checkLost(t, "GET inside MULTI", get)
			checkLost(t, "EXEC", exec)
			require.False(t, errors.Is(exec, shard.ErrTxAborted))

			setLimit("normal 0 0 0")
			n, err := redis.Int(c.Do(ctx, "LLEN", dst))
			require.NoError(t, err)
			require.Equal(t, 1, n, "RPOPLPUSH ran once")
		})
	}
}
