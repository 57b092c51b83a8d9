package pool

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// abort cuts a blocked read short from another goroutine, for a fresh and
// for a reused connection, and the aborted connection is not handed out
// again.
func TestGetAbortableCutsAReadShort(t *testing.T) {
	srv := plainServer(t)
	s := newTestSet(t, Options{ReadTimeout: 5 * time.Second})
	ctx := context.Background()
	for _, name := range []string{"fresh", "reused"} {
		c, abort, err := s.GetAbortable(ctx, srv.Addr, false)
		require.NoError(t, err, name)
		time.AfterFunc(100*time.Millisecond, abort)
		start := time.Now()
		_, err = c.Do("BLPOP", "abort:none", "3") // blocks on the server for 3 s
		require.Error(t, err, name)
		assert.Less(t, time.Since(start), time.Second, "%s: the read was cut short", name)
		require.NoError(t, c.Close())

		// The next borrower gets a working connection.
		c2, abort2, err := s.GetAbortable(ctx, srv.Addr, false)
		require.NoError(t, err, name)
		pong, err := redis.String(c2.Do("PING"))
		require.NoError(t, err, name)
		assert.Equal(t, "PONG", pong)
		require.NoError(t, c2.Close())
		_ = abort2 // not called: the connection goes back to the pool whole
	}
}
