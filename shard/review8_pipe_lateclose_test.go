package shard_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// startLateCloseProxy starts a proxy that forwards bytes between clients
// and a real server at once, but passes the server's close on to the
// client only after delay: the client sees a reply and then, for delay, a
// connection that looks alive. It is what a loaded machine does when the
// server is descheduled between writing a protocol error reply and
// closing the connection.
func startLateCloseProxy(t *testing.T, target string, delay time.Duration) *redistest.Proxy {
	t.Helper()
	return redistest.StartProxy(t, target, redistest.ProxyOptions{CloseDelay: delay})
}

// TestReview8AutoPipelineNeverReusesAConnectionAfterAProtocolError: after
// a protocol error reply the server closes the connection, but the close
// can come some time after the reply. The automatic pipeline used to hand
// such a connection back to the pool, whose borrow check saw nothing
// wrong yet, so the next command was written on it and came back as of
// unknown outcome ("connection reset by peer") although the server never
// read it.
func TestReview8AutoPipelineNeverReusesAConnectionAfterAProtocolError(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	proxy := startLateCloseProxy(t, server.Addr, 300*time.Millisecond)
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Shards[0].Addr = proxy.Addr
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c)
	ctx := context.Background()

	// A header over proto-max-bulk-len is refused before the value is
	// read: the SET's write completes and its reply is the protocol error.
	value := strings.Repeat("x", 1<<20+1)
	for i := 0; i < 5; i++ {
		_, err := c.Do(ctx, "SET", "review8:big", value)
		require.Error(t, err, "SET over proto-max-bulk-len (round %d)", i)
		var re redis.Error
		if errors.As(err, &re) {
			require.Contains(t, err.Error(), "Protocol error")
		}
		n, err := redis.Int(c.Do(ctx, "INCR", "review8:count"))
		require.NoError(t, err, "the next command after a protocol error (round %d)", i)
		require.Equal(t, i+1, n)
	}
}

// TestReview8NoPathReusesAConnectionAfterAProtocolError: every way a
// command reaches a connection (a plain Do, a Pipeline, a transaction, a
// dedicated Conn) gives the connection a protocol error closed back to no
// later caller, even when the server's close comes late.
func TestReview8NoPathReusesAConnectionAfterAProtocolError(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	proxy := startLateCloseProxy(t, server.Addr, 300*time.Millisecond)
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Shards[0].Addr = proxy.Addr
	value := strings.Repeat("x", 1<<20+1)
	tests := []struct {
		name string
		big  func(ctx context.Context, c *shard.Client) error
	}{
		{"do", func(ctx context.Context, c *shard.Client) error {
			_, err := c.Do(ctx, "SET", "review8:big", value)
			return err
		}},
		{"pipeline", func(ctx context.Context, c *shard.Client) error {
			p := c.Pipeline()
			p.Send("SET", "review8:big", value)
			p.Send("GET", "review8:big")
			res, err := p.Exec(ctx)
			if err != nil {
				return err
			}
			if len(res) != 2 {
				return errors.New("pipeline: not two results")
			}
			return res[0].Err
		}},
		{"tx", func(ctx context.Context, c *shard.Client) error {
			_, err := c.Tx(ctx, []string{"review8:big"}, func(tx *shard.Tx) error {
				return tx.Queue("SET", "review8:big", value)
			})
			return err
		}},
		{"conn", func(ctx context.Context, c *shard.Client) error {
			conn := c.Conn()
			defer conn.Close()
			_, err := conn.Do("SET", "review8:big", value)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, cfg)
			ctx := context.Background()
			for i := 0; i < 5; i++ {
				require.Error(t, tt.big(ctx, c), "SET over proto-max-bulk-len (round %d)", i)
				// Several callers at once, so that every idle connection
				// of the pool is asked for.
				var wg sync.WaitGroup
				errs := make([]error, 4)
				for g := range errs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, errs[g] = c.Do(ctx, "INCR", "review8:count")
					}()
				}
				wg.Wait()
				for g, err := range errs {
					require.NoError(t, err, "INCR %d after a protocol error (round %d)", g, i)
				}
			}
			n, err := redis.Int(c.Do(ctx, "GET", "review8:count"))
			require.NoError(t, err)
			require.Equal(t, 20, n)
			_, err = c.Do(ctx, "DEL", "review8:count")
			require.NoError(t, err)
		})
	}
}
