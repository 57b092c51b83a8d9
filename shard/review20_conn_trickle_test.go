package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Through the redis.Conn of Client.Conn, as through Client.Do, a reply
// trickled a byte every 100 ms fails within the read timeout (or the
// shorter timeout a call gives), not a read timeout per byte: Do,
// DoWithTimeout, Send+Flush+Receive (Flush reads the replies),
// Send+ReceiveWithTimeout and a WATCH, whose connection is pinned to the
// transaction.
func TestReview20RoutedConnTrickledReplyTimesOut(t *testing.T) {
	const readTimeout = 400 * time.Millisecond
	ways := []struct {
		name string
		want time.Duration
		run  func(conn redis.Conn) error
	}{
		{"Do", readTimeout, func(conn redis.Conn) error { _, err := conn.Do("GET", "k"); return err }},
		{"DoWithTimeout", 250 * time.Millisecond, func(conn redis.Conn) error {
			_, err := redis.DoWithTimeout(conn, 250*time.Millisecond, "GET", "k")
			return err
		}},
		{"DoContext", readTimeout, func(conn redis.Conn) error {
			_, err := redis.DoContext(conn, context.Background(), "GET", "k")
			return err
		}},
		{"Send Flush Receive", readTimeout, func(conn redis.Conn) error {
			if err := conn.Send("GET", "k"); err != nil {
				return err
			}
			if err := conn.Flush(); err != nil {
				return err
			}
			_, err := conn.Receive()
			return err
		}},
		// Without a Flush, the Receive sends the command, under its timeout.
		{"Send ReceiveWithTimeout", 250 * time.Millisecond, func(conn redis.Conn) error {
			if err := conn.Send("GET", "k"); err != nil {
				return err
			}
			_, err := redis.ReceiveWithTimeout(conn, 250*time.Millisecond)
			return err
		}},
		{"WATCH", readTimeout, func(conn redis.Conn) error { _, err := conn.Do("WATCH", "k"); return err }},
		{"pipelined GETs", readTimeout, func(conn redis.Conn) error {
			for _, k := range []string{"a", "b", "c"} {
				if err := conn.Send("GET", k); err != nil {
					return err
				}
			}
			_, err := conn.Do("")
			return err
		}},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			limit := w.want + w.want/5
			for round := 1; ; round++ {
				tr := redistest.StartTrickler(t, 100*time.Millisecond, nil)
				c := newClient(t, faultConfig(tr.Addr, readTimeout))
				conn := c.Conn()
				start := time.Now()
				err := w.run(conn)
				took := time.Since(start)
				conn.Close()
				require.Error(t, err)
				var ne *shard.NodeError
				assert.ErrorAs(t, err, &ne)
				assert.True(t, isTimeout(err), "%v", err)
				if took < limit || round == 3 {
					assert.Less(t, took, limit, "the timeout bounds the whole reply")
					break
				}
				t.Logf("round %d took %v; again", round, took)
			}
		})
	}
}
