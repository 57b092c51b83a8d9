package shard_test

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
)

// TestReview8CallersOwnAuthRefusalIsItsReply: the WRONGPASS the server
// gives an AUTH (or HELLO ... AUTH) that the caller sent itself refuses
// that command's credentials, not the connection's. It became a
// *pool.AuthError naming the configured user and counted as a failure of
// the node: a caller trying a wrong password could get a healthy node
// marked down.
func TestReview8CallersOwnAuthRefusalIsItsReply(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Health.Interval = time.Hour // only the commands count failures
	for _, autoPipe := range []bool{false, true} {
		cfg.DisableAutoPipeline = !autoPipe
		c := newClient(t, cfg)
		ctx := context.Background()
		const secret = "review8-wrong-secret"
		cmds := [][]any{
			{"AUTH", "review8user", secret},
			{"HELLO", "2", "AUTH", "review8user", secret},
		}
		for round := 0; round < 2; round++ {
			for _, cmd := range cmds {
				what := cmd[0].(string)
				_, err := c.DoKey(ctx, "review8:auth", what, cmd[1:]...)
				require.Error(t, err, what)
				var re redis.Error
				require.True(t, errors.As(err, &re), "%s: %v", what, err)
				require.True(t, strings.HasPrefix(string(re), "WRONGPASS"), "%s: %v", what, err)
				require.False(t, errors.Is(err, pool.ErrAuth), "%s: the caller's own AUTH is no failure of the client's credentials: %v", what, err)
				var ae *pool.AuthError
				require.False(t, errors.As(err, &ae), what)
				require.NotContains(t, err.Error(), secret, what)
			}
		}
		st := c.Stats().Nodes[0]
		require.False(t, st.Down, "auto pipeline %v: node marked down by the caller's wrong AUTH", autoPipe)
		require.Zero(t, st.Errors, "auto pipeline %v: the caller's wrong AUTH counted as node errors", autoPipe)
		_, err := c.DoKey(ctx, "review8:auth", "SET", "review8:auth", "v")
		require.NoError(t, err)
		c.Close()
	}
}

// TestReview8CallersOwnAuthRefusalInAPipeline: the same in a pipeline,
// where the commands around the AUTH run as usual.
func TestReview8CallersOwnAuthRefusalInAPipeline(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Health.Interval = time.Hour
	c := newClient(t, cfg)
	ctx := context.Background()
	for round := 0; round < 4; round++ {
		p := c.Pipeline()
		p.SendKey("review8:authp", "INCR", "review8:authp")
		p.SendKey("review8:authp", "AUTH", "nobody", "review8-wrong")
		p.SendKey("review8:authp", "INCR", "review8:authp")
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		require.NoError(t, res[2].Err)
		require.Equal(t, int64(2*round+2), res[2].Reply)
		var re redis.Error
		require.True(t, errors.As(res[1].Err, &re), "%v", res[1].Err)
		require.False(t, errors.Is(res[1].Err, pool.ErrAuth), "%v", res[1].Err)
	}
	st := c.Stats().Nodes[0]
	require.False(t, st.Down)
	require.Zero(t, st.Errors)
}
