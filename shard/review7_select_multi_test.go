package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/shardis/shardis/shard/command"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// getIn reads key from database db of server, on a connection of the
// test's own.
func getIn(t *testing.T, server *redistest.Server, db int, key string) (string, bool) {
	t.Helper()
	conn, err := redis.Dial("tcp", server.Addr, redis.DialDatabase(db))
	require.NoError(t, err)
	defer conn.Close()
	v, err := redis.String(conn.Do("GET", key))
	if errors.Is(err, redis.ErrNil) {
		return "", false
	}
	require.NoError(t, err)
	return v, true
}

// A client configured for database 3 (Pool.DB): SELECT 3 changes
// nothing, so it runs inside MULTI on a Conn as it does outside (it was
// refused as a state change, taking the whole transaction with it);
// SELECT of another database is refused with a *ConnStateError before
// anything of the transaction is sent, as outside MULTI, on a Conn and in
// Client.Tx alike (Tx sent it, and the queued writes then went to the
// other database, where the client never looks).
func TestReview7SelectInsideMulti(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	cfg := faultConfig(server.Addr, 2*time.Second)
	cfg.Pool.DB = 3
	c := newClient(t, cfg)
	ctx := context.Background()

	t.Run("conn same db", func(t *testing.T) {
		conn := c.Conn()
		defer conn.Close()
		for _, cmd := range [][]any{{"MULTI"}, {"SET", "r7sel:a", "1"}, {"SELECT", "3"}, {"GET", "r7sel:a"}} {
			require.NoError(t, conn.Send(cmd[0].(string), cmd[1:]...))
		}
		reply, err := redis.Values(conn.Do("EXEC"))
		require.NoError(t, err)
		require.Len(t, reply, 3)
		assert.Equal(t, "OK", reply[0])
		assert.Equal(t, "OK", reply[1])
		assert.Equal(t, []byte("1"), reply[2])
		v, ok := getIn(t, server, 3, "r7sel:a")
		assert.True(t, ok)
		assert.Equal(t, "1", v)
	})

	t.Run("conn same db, one Do at a time", func(t *testing.T) {
		conn := c.Conn()
		defer conn.Close()
		_, err := conn.Do("MULTI")
		require.NoError(t, err)
		_, err = conn.Do("SET", "r7sel:d", "4")
		require.NoError(t, err)
		_, err = conn.Do("SELECT", 3)
		require.NoError(t, err)
		reply, err := redis.Values(conn.Do("EXEC"))
		require.NoError(t, err)
		require.Len(t, reply, 2)
		assert.Equal(t, "OK", reply[0])
		assert.Equal(t, "OK", reply[1])
		v, ok := getIn(t, server, 3, "r7sel:d")
		assert.True(t, ok)
		assert.Equal(t, "4", v)
	})

	for _, oneGo := range []bool{true, false} {
		name, key := "conn other db, one Do at a time", "r7sel:b1"
		if oneGo {
			name, key = "conn other db, in one go", "r7sel:b2"
		}
		t.Run(name, func(t *testing.T) {
			conn := c.Conn()
			defer conn.Close()
			cmds := [][]any{{"MULTI"}, {"SET", key, "2"}, {"SELECT", "5"}, {"SET", key, "3"}, {"EXEC"}}
			var errs []error
			if oneGo {
				for _, cmd := range cmds {
					require.NoError(t, conn.Send(cmd[0].(string), cmd[1:]...))
				}
				r, _ := conn.Do("")
				replies, _ := r.([]any)
				require.Len(t, replies, len(cmds))
				for _, r := range replies {
					e, _ := r.(error)
					errs = append(errs, e)
				}
			} else {
				for _, cmd := range cmds {
					_, err := conn.Do(cmd[0].(string), cmd[1:]...)
					errs = append(errs, err)
				}
			}
			var cse *shard.ConnStateError
			require.ErrorAs(t, errs[2], &cse, "SELECT 5")
			assert.Equal(t, command.Database, cse.Effect)
			require.ErrorIs(t, errs[4], shard.ErrConnState, "EXEC of the refused transaction")
			for _, db := range []int{3, 5} {
				_, ok := getIn(t, server, db, key)
				assert.False(t, ok, "nothing of the transaction ran (db %d)", db)
			}
			// The Conn serves the next transaction.
			_, err := conn.Do("MULTI")
			require.NoError(t, err)
			_, err = conn.Do("SET", key, "9")
			require.NoError(t, err)
			_, err = conn.Do("EXEC")
			require.NoError(t, err)
			v, _ := getIn(t, server, 3, key)
			assert.Equal(t, "9", v)
		})
	}

	t.Run("tx", func(t *testing.T) {
		for _, queue := range []bool{true, false} {
			_, err := c.Tx(ctx, []string{"r7sel:c"}, func(tx *shard.Tx) error {
				if queue {
					require.NoError(t, tx.Queue("SET", "r7sel:c", "1"))
					return tx.Queue("SELECT", "5")
				}
				_, err := tx.Do("SELECT", "5")
				return err
			})
			var cse *shard.ConnStateError
			require.ErrorAs(t, err, &cse, "queue %v", queue)
			assert.Equal(t, command.Database, cse.Effect)
		}
		for _, db := range []int{3, 5} {
			_, ok := getIn(t, server, db, "r7sel:c")
			assert.False(t, ok, "db %d", db)
		}
		reply, err := c.Tx(ctx, []string{"r7sel:c"}, func(tx *shard.Tx) error {
			if _, err := tx.Do("SELECT", 3); err != nil {
				return err
			}
			if err := tx.Queue("SELECT", "3"); err != nil {
				return err
			}
			return tx.Queue("SET", "r7sel:c", "2")
		})
		require.NoError(t, err)
		assert.Equal(t, []any{"OK", "OK"}, reply)
		v, _ := getIn(t, server, 3, "r7sel:c")
		assert.Equal(t, "2", v)
	})
}
