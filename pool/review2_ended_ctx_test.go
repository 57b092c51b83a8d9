package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// TestReview2DoContextEndedWritesNothing: redis.DoContext on a pooled
// connection with a context that has already ended (cancelled, or its
// deadline passed) writes nothing: it fails with the context's error, the
// list keeps its element, and the connection goes back to the pool whole.
// Before, the LPOP was written (the connection was closed only afterwards,
// from another goroutine): the element was popped while the caller got
// "context canceled", or even got the reply.
func TestReview2DoContextEndedWritesNothing(t *testing.T) {
	srv := plainServer(t)
	s := newTestSet(t, Options{})
	bg := context.Background()
	do := func(args ...any) any {
		t.Helper()
		c, err := s.Get(bg, srv.Addr)
		require.NoError(t, err)
		defer c.Close()
		r, err := c.Do(args[0].(string), args[1:]...)
		require.NoError(t, err)
		return r
	}
	do("RPUSH", "r2p:l", "a")
	for i := range 20 {
		for _, ended := range []func() (context.Context, context.CancelFunc){
			func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(bg)
				cancel()
				return ctx, cancel
			},
			func() (context.Context, context.CancelFunc) {
				return context.WithDeadline(bg, time.Now().Add(-time.Second))
			},
		} {
			ctx, cancel := ended()
			c, err := s.Get(bg, srv.Addr)
			require.NoError(t, err)
			_, err = redis.DoContext(c, ctx, "LPOP", "r2p:l")
			cancel()
			require.Error(t, err, "attempt %d", i)
			require.True(t, errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded), "attempt %d: %v", i, err)
			require.NoError(t, c.Close())
			n, err := redis.Int(do("LLEN", "r2p:l"), nil)
			require.NoError(t, err)
			require.Equal(t, 1, n, "attempt %d: an LPOP under an ended context popped the element", i)
		}
	}
	st := s.Stats()[srv.Addr]
	require.LessOrEqual(t, st.Dials, int64(2), "the connections went back whole: %+v", st)
}
