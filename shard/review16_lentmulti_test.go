package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview16ForEachShardBlockingAfterRefusedMulti: a MULTI that the
// server refused (NOPERM: the user may not run it) leaves the connection
// outside a transaction, so a BLPOP sent after it blocks on the server.
// On a connection lent to a ForEachShard function it must wait for as
// long as it asked to block, as it does without the MULTI, not fail at
// the pool's read timeout: the element pushed after the read timeout
// has passed several times is its reply. Both with the MULTI's reply
// read before the BLPOP is sent (Do) and with the two pipelined (Send,
// then Receive or Do).
func TestReview16ForEachShardBlockingAfterRefusedMulti(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	_, err := servers[0].Do("ACL", "SETUSER", "default", "-multi")
	require.NoError(t, err)
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout = readTimeout
	c := newClient(t, cfg)

	send := map[string]func(conn redis.Conn, key string) (any, error){
		"Do": func(conn redis.Conn, key string) (any, error) {
			if _, err := conn.Do("MULTI"); err == nil {
				return nil, errMultiAccepted
			}
			return conn.Do("BLPOP", key, 5)
		},
		"Send then Do": func(conn redis.Conn, key string) (any, error) {
			if err := conn.Send("MULTI"); err != nil {
				return nil, err
			}
			// Do reads MULTI's reply too, and returns its error reply
			// with the BLPOP's reply.
			reply, err := conn.Do("BLPOP", key, 5)
			if re, ok := err.(redis.Error); ok && strings.HasPrefix(string(re), "NOPERM") {
				err = nil
			}
			return reply, err
		},
		"Receive": func(conn redis.Conn, key string) (any, error) {
			if err := conn.Send("MULTI"); err != nil {
				return nil, err
			}
			if err := conn.Send("BLPOP", key, 5); err != nil {
				return nil, err
			}
			if err := conn.Flush(); err != nil {
				return nil, err
			}
			if _, err := conn.Receive(); err == nil {
				return nil, errMultiAccepted
			}
			return conn.Receive()
		},
	}
	for name, do := range send {
		t.Run(name, func(t *testing.T) {
			key := "r16lentmulti:" + name
			type result struct {
				reply any
				err   error
			}
			done := make(chan result, 1)
			sent := make(chan time.Time, 1)
			go func() {
				var r result
				err := c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
					sent <- time.Now()
					r.reply, r.err = do(conn, key)
					return nil
				})
				if r.err == nil {
					r.err = err
				}
				done <- r
			}()
			var at time.Time
			select {
			case at = <-sent:
			case <-time.After(15 * time.Second):
				t.Fatal("ForEachShard did not call fn")
			}
			var early *result
			waitFor(t, 15*time.Second, "three read timeouts to pass with BLPOP blocked", func() bool {
				select {
				case r := <-done:
					early = &r
					return true
				default:
				}
				return time.Since(at) > 3*readTimeout && r16BlockedOn(servers[0], "blpop")
			})
			require.Nil(t, early, "BLPOP returned before anything was pushed: %+v", early)
			_, err := servers[0].Do("RPUSH", key, "elem")
			require.NoError(t, err)
			select {
			case r := <-done:
				require.NoError(t, r.err)
				got, err := redis.Strings(r.reply, nil)
				require.NoError(t, err)
				assert.Equal(t, []string{key, "elem"}, got)
			case <-time.After(15 * time.Second):
				t.Fatal("BLPOP did not return after the push")
			}
		})
	}
}

// errMultiAccepted: the server ran a MULTI that it should have refused.
var errMultiAccepted = errors.New("MULTI was not refused")
