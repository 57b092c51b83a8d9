package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview10PipelineCommandWrittenBeforeAResetGetsItsReply: a server
// refuses a value over proto-max-bulk-len with a protocol error and
// resets the connection while the client is still writing. In a
// pipeline of oversized SETs the first one is written whole and refused,
// and the write of a later one meets the reset: the first SET was
// reported as an outcome unknown ("connection reset"), in 88 of 100
// rounds, although the server's refusal was in the socket. It must get
// that refusal (it did not run); the SETs after it did not run either.
func TestReview10PipelineCommandWrittenBeforeAResetGetsItsReply(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := faultConfig(server.Addr, 2*time.Second)
	c := newClient(t, cfg)
	ctx := context.Background()
	big := strings.Repeat("x", 1<<20+1)
	const rounds = 50
	unknown := 0
	var first error
	for range rounds {
		p := c.Pipeline()
		for _, k := range []string{"r10:a", "r10:b", "r10:c"} {
			p.Send("SET", k, big)
		}
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		require.Len(t, res, 3)
		for _, r := range res {
			require.Error(t, r.Err, "SET of a value over proto-max-bulk-len succeeded")
			var uo *shard.UnknownOutcomeError
			if errors.As(r.Err, &uo) {
				unknown++
				if first == nil {
					first = r.Err
				}
			}
		}
	}
	if unknown > 0 {
		t.Errorf("%d of %d refused SETs reported as of unknown outcome, the first: %v", unknown, 3*rounds, first)
	}
	n, err := server.Do("EXISTS", "r10:a", "r10:b", "r10:c")
	require.NoError(t, err)
	require.Equal(t, "0", n, "a SET over proto-max-bulk-len ran")
}

// TestReview10ConnTxCommandWrittenBeforeAResetGetsItsReply: the same on
// the connection a Conn holds under WATCH: the first oversized SET,
// written whole and refused, was reported as an outcome unknown in 45 of
// 50 rounds; it must get the server's refusal.
func TestReview10ConnTxCommandWrittenBeforeAResetGetsItsReply(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	c := newClient(t, faultConfig(server.Addr, 2*time.Second))
	big := strings.Repeat("x", 1<<20+1)
	const rounds = 50
	unknown := 0
	var first error
	for range rounds {
		conn := c.Conn()
		_, err := conn.Do("WATCH", "r10:w")
		require.NoError(t, err)
		for range 3 {
			require.NoError(t, conn.Send("SET", "r10:w", big))
		}
		r, _ := conn.Do("")
		replies, _ := r.([]any)
		require.Len(t, replies, 3)
		for _, x := range replies {
			e, _ := x.(error)
			require.Error(t, e, "SET of a value over proto-max-bulk-len succeeded")
			var uo *shard.UnknownOutcomeError
			if errors.As(e, &uo) {
				unknown++
				if first == nil {
					first = e
				}
			}
		}
		conn.Close()
	}
	if unknown > 0 {
		t.Errorf("%d of %d refused SETs reported as of unknown outcome, the first: %v", unknown, 3*rounds, first)
	}
	n, err := server.Do("EXISTS", "r10:w")
	require.NoError(t, err)
	require.Equal(t, "0", n, "a SET over proto-max-bulk-len ran")
}
