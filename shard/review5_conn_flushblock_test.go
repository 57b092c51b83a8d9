package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// TestReview5ConnFlushLeavesABlockingCommandToReceive: the redigo idiom
// Send("BLPOP", key, 0), Flush, ReceiveWithTimeout (or ReceiveContext)
// bounds the wait by the timeout given to Receive. A Conn's Flush read
// every reply itself, with no bound, so it waited as long as BLPOP blocked
// (forever for a timeout of 0) and Receive's timeout never applied.
func TestReview5ConnFlushLeavesABlockingCommandToReceive(t *testing.T) {
	c, servers := startRing(t, 1)
	for _, watched := range []bool{false, true} {
		name := map[bool]string{false: "routed", true: "under WATCH"}[watched]
		t.Run(name, func(t *testing.T) {
			conn := c.Conn()
			defer conn.Close()
			if watched {
				_, err := conn.Do("WATCH", "r5f:q")
				require.NoError(t, err)
			}
			require.NoError(t, conn.Send("SET", "r5f:k", "v"))
			require.NoError(t, conn.Send("BLPOP", "r5f:q", 0))
			type result struct {
				set, pop error
				took     time.Duration
			}
			done := make(chan result, 1)
			go func() {
				start := time.Now()
				if err := conn.Flush(); err != nil {
					done <- result{set: err}
					return
				}
				_, setErr := redis.ReceiveWithTimeout(conn, 300*time.Millisecond)
				_, popErr := redis.ReceiveWithTimeout(conn, 300*time.Millisecond)
				done <- result{set: setErr, pop: popErr, took: time.Since(start)}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				// Let the BLPOP go, then fail.
				_, err := servers[0].Do("RPUSH", "r5f:q", "x")
				require.NoError(t, err)
				<-done
				t.Fatal("Flush waited for the BLPOP: ReceiveWithTimeout's timeout did not apply")
			}
			require.NoError(t, r.set)
			require.Error(t, r.pop)
			require.True(t, errors.Is(r.pop, context.DeadlineExceeded), "%v", r.pop)
			// The BLPOP is no longer waiting on the server (its connection
			// was closed): an element pushed now stays in the list.
			waitFor(t, 10*time.Second, "the BLPOP to leave the server", func() bool {
				list, err := clientList(servers[0])
				require.NoError(t, err)
				for _, ci := range list {
					if ci["cmd"] == "blpop" {
						return false
					}
				}
				return true
			})
			_, err := servers[0].Do("RPUSH", "r5f:q", "x")
			require.NoError(t, err)
			n, err := servers[0].Do("LLEN", "r5f:q")
			require.NoError(t, err)
			require.Equal(t, "1", n)
			_, err = servers[0].Do("DEL", "r5f:q")
			require.NoError(t, err)
		})
	}
}
