package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview17PipelinedExecAfterRefusedMultiLeavesNoWatch: keys watched
// on a lent connection stay watched when the MULTI after them is refused
// (its ACL user may not run MULTI) and the EXEC sent with it, before that
// refusal was read, is refused too. The lent connection goes back to the
// pool: the next caller to borrow it must not inherit the watch, so its
// own MULTI ... EXEC runs though another client changed the key.
func TestReview17PipelinedExecAfterRefusedMultiLeavesNoWatch(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Pool.Username, cfg.Pool.Password = "nomulti", "nomultipw"
	cfg.Health.Interval = -1
	const watched = "r17rmp:w"
	ctx := context.Background()
	firsts := []struct {
		name string
		run  func(t *testing.T, c *shard.Client)
	}{
		{"ForEachShard", func(t *testing.T, c *shard.Client) {
			err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				if _, err := conn.Do("WATCH", watched); err != nil {
					return err
				}
				for _, cmd := range []string{"MULTI", "EXEC"} {
					if err := conn.Send(cmd); err != nil {
						return err
					}
				}
				if err := conn.Flush(); err != nil {
					return err
				}
				_, multiErr := conn.Receive()
				_, execErr := conn.Receive()
				if multiErr == nil || execErr == nil {
					t.Errorf("MULTI = %v, EXEC = %v: want both refused", multiErr, execErr)
				}
				return nil
			})
			require.NoError(t, err)
		}},
		{"Tx", func(t *testing.T, c *shard.Client) {
			_, err := c.Tx(ctx, []string{watched}, func(tx *shard.Tx) error {
				return tx.Queue("SET", watched+":q", "v")
			})
			requireNoPerm(t, err, "the Tx's refused MULTI")
		}},
	}
	for _, first := range firsts {
		t.Run(first.name, func(t *testing.T) {
			_, err := server.Do("ACL", "SETUSER", "nomulti", "reset", "on", ">nomultipw", "~*", "&*", "+@all", "-multi")
			require.NoError(t, err)
			c := newClient(t, cfg)
			first.run(t, c)

			_, err = server.Do("ACL", "SETUSER", "nomulti", "+multi")
			require.NoError(t, err)
			_, err = server.Do("INCR", watched)
			require.NoError(t, err)
			var reply any
			err = c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				conn.Send("MULTI")
				conn.Send("INCR", watched+":next")
				var err error
				reply, err = conn.Do("EXEC")
				return err
			})
			require.NoError(t, err)
			require.NotNil(t, reply, "the next transaction aborted: the key the previous caller watched is still watched on its connection")
		})
	}
}
