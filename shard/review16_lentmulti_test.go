package shard_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
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
	checkLentBlockingWaits(t, c, servers[0], readTimeout, "r16lentmulti:", send)
}

// errMultiAccepted: the server ran a MULTI that it should have refused.
var errMultiAccepted = errors.New("MULTI was not refused")
