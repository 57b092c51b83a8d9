package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview5ConnSendsNothingAfterClientClose: once the Client is closed,
// a Conn's commands fail with ErrClosed, as its Err says and as Close
// documents for later calls, and the connection its WATCH held is let go.
// A Conn pinned by WATCH went on sending on that connection: MULTI, SET
// and EXEC ran on the server after Client.Close, and the connection
// stayed open for as long as the Conn did.
func TestReview5ConnSendsNothingAfterClientClose(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = "r5closed"
	cfg.Health.Interval = -1
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	defer c.Close()
	_, err = servers[0].Do("SET", "r5a:k", "before")
	require.NoError(t, err)

	conn := c.Conn()
	defer conn.Close()
	_, err = conn.Do("WATCH", "r5a:k")
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.ErrorIs(t, conn.Err(), shard.ErrClosed)

	for _, cmd := range [][]any{{"MULTI"}, {"SET", "r5a:k", "after"}, {"EXEC"}} {
		_, err := conn.Do(cmd[0].(string), cmd[1:]...)
		require.ErrorIs(t, err, shard.ErrClosed, "%v after Client.Close", cmd[0])
	}
	got, err := servers[0].Do("GET", "r5a:k")
	require.NoError(t, err)
	require.Equal(t, "before", got, "a write ran after Client.Close")

	// The watching connection is closed though the Conn is still open.
	waitFor(t, 10*time.Second, "the watching connection to close", func() bool {
		list, err := clientList(servers[0])
		require.NoError(t, err)
		for _, ci := range list {
			if ci["name"] == "r5closed" {
				return false
			}
		}
		return true
	})
}
