package shard_test

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview5BlockingCommandInsideMultiKeepsTheReadTimeout: between MULTI
// and EXEC a blocking command (BLPOP ... 0, XREAD BLOCK 0) does not block:
// the server answers QUEUED, and EXEC runs it as its non-blocking form. A
// Conn waited for its transaction's replies as long as the command asked
// to block, so with a timeout of 0 a hung server held the Conn's EXEC
// forever instead of failing it after the read timeout.
func TestReview5BlockingCommandInsideMultiKeepsTheReadTimeout(t *testing.T) {
	for _, blocking := range [][]any{
		{"BLPOP", "r5m:list", 0},
		{"XREAD", "BLOCK", 0, "STREAMS", "r5m:stream", "$"},
	} {
		t.Run(blocking[0].(string), func(t *testing.T) {
			servers := redistest.StartNTB(t, 1, redistest.Options{})
			cfg := ringConfig(servers)
			cfg.Pool.ReadTimeout = 300 * time.Millisecond
			cfg.Health.Interval = -1
			c := newClient(t, cfg)
			conn := c.Conn()
			defer conn.Close()

			// Unpaused, the transaction runs at once.
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send(blocking[0].(string), blocking[1:]...))
			reply, err := redis.Values(conn.Do("EXEC"))
			require.NoError(t, err)
			require.Len(t, reply, 1)
			require.Nil(t, reply[0])

			_, err = conn.Do("WATCH", "r5m:list", "r5m:stream") // the connection is held from here
			require.NoError(t, err)
			pauseUntilCleanup(t, servers[0])
			done := make(chan error, 1)
			go func() {
				if err := conn.Send("MULTI"); err != nil {
					done <- err
					return
				}
				if err := conn.Send(blocking[0].(string), blocking[1:]...); err != nil {
					done <- err
					return
				}
				_, err := conn.Do("EXEC")
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				var ne *shard.NodeError
				require.ErrorAs(t, err, &ne)
			case <-time.After(20 * time.Second): // 60 read timeouts
				require.NoError(t, servers[0].Resume())
				<-done
				t.Fatal("EXEC on a hung server outlived the read timeout")
			}
		})
	}
}
