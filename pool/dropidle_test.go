package pool

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DropIdle retires every connection a pool holds — idle ones when a Get
// comes across them, borrowed ones when they come back — without starting
// a new pool: MaxActive keeps counting the connection borrowed at that
// moment, so the server never sees more than MaxActive from it.
func TestDropIdleRetiresConnectionsWithinMaxActive(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{MaxActive: 1, Wait: true})
	ctx := context.Background()
	id := func(c redis.Conn) int64 {
		t.Helper()
		n, err := redis.Int64(c.Do("CLIENT", "ID"))
		require.NoError(t, err)
		return n
	}

	// Idle connection: retired on the next Get.
	c, err := set.Get(ctx, srv.Addr)
	require.NoError(t, err)
	idle := id(c)
	c.Close()
	set.DropIdle(srv.Addr)
	c, err = set.Get(ctx, srv.Addr)
	require.NoError(t, err)
	borrowed := id(c)
	assert.NotEqual(t, idle, borrowed, "a dropped idle connection was handed out again")

	// Borrowed connection: the pool is not replaced, so a Get waits for it
	// (MaxActive 1) instead of opening a second one.
	set.DropIdle(srv.Addr)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = set.Get(short, srv.Addr)
	cancel()
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a second connection beyond MaxActive")
	c.Close() // comes back, and is retired
	c, err = set.Get(ctx, srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	assert.NotEqual(t, borrowed, id(c), "a connection borrowed before DropIdle was handed out again")
	assert.Equal(t, int64(3), set.Stats()[srv.Addr].Dials, "three connections dialed, one at a time")

	set.DropIdle("127.0.0.1:1") // unknown: nothing happens
}
