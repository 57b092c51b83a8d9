package shard

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/stretchr/testify/require"
)

// closedFully reports whether c's Close has done all its work (stopped
// the background loops, closed the pools).
func closedFully(c *Client) bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

// review8Client is a client of the server at addr; with checks, it runs
// health checks every 20 ms.
func review8Client(t *testing.T, addr string, checks bool, hooks *Hooks) *Client {
	t.Helper()
	health := HealthOptions{Interval: -1}
	if checks {
		health = HealthOptions{Interval: 20 * time.Millisecond, FailureLimit: 3, Timeout: time.Second}
	}
	c, err := New(context.Background(), Config{
		Shards: []ring.Shard{{Name: "s0", Addr: addr, Weight: 1}},
		Health: health,
		Hooks:  hooks,
	})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestReview8CloseOfAnotherClientFromACallback: Close called inside a
// callback returns at once (the callback may run on a goroutine Close
// waits for), but it told callbacks apart by their stack only, so a hook
// of client A that closed client B, which runs nothing of A's, also had
// B.Close return before B was closed: B's background loops and
// connections outlived the Close. A Close of a client none of whose
// callbacks runs now does its whole work before it returns; one inside a
// callback of the client closed (directly or through another client's
// callback) still returns at once. (B runs no health checks: a check in
// progress is code of B's program, Close cannot tell on which goroutine,
// and it would return at once.)
func TestReview8CloseOfAnotherClientFromACallback(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	ctx := context.Background()

	t.Run("A's hook closes B", func(t *testing.T) {
		b := review8Client(t, server.Addr, false, nil)
		_, err := b.Do(ctx, "SET", "r8close:k", "v")
		require.NoError(t, err)
		var once sync.Once
		full := make(chan bool, 1)
		closeErr := make(chan error, 1)
		a := review8Client(t, server.Addr, true, &Hooks{Finish: func(context.Context, *Op) {
			once.Do(func() {
				closeErr <- b.Close()
				full <- closedFully(b)
			})
		}})
		_, err = a.Do(ctx, "GET", "r8close:k")
		require.NoError(t, err)
		require.NoError(t, <-closeErr)
		require.True(t, <-full, "B.Close returned before B was closed")
	})

	t.Run("B's callback closes B through A's hook", func(t *testing.T) {
		b := review8Client(t, server.Addr, false, nil)
		var once sync.Once
		took := make(chan time.Duration, 1)
		a := review8Client(t, server.Addr, true, &Hooks{Finish: func(context.Context, *Op) {
			once.Do(func() {
				start := time.Now()
				_ = b.Close()
				took <- time.Since(start)
			})
		}})
		done := make(chan error, 1)
		go func() {
			done <- b.ForEachShard(ctx, func(ctx context.Context, _ Node, _ redis.Conn) error {
				_, err := a.Do(ctx, "GET", "r8close:k")
				return err
			})
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("ForEachShard whose function closed its client through another's hook did not return")
		}
		require.Less(t, <-took, 5*time.Second)
		require.Eventually(t, func() bool { return closedFully(b) }, 10*time.Second, 10*time.Millisecond)
	})
}
