package shard_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// After a MULTI that the server refused (its ACL user may not run MULTI)
// no transaction is open: a write the Conn's caller sent after it, taking
// it for queued, runs at once. When its connection failed before its
// reply came, it was reported as a plain *NodeError, as a queued command
// that EXEC never ran is; but it may have run, and its outcome is
// unknown, as for any write sent outside a transaction: an
// *UnknownOutcomeError.
func TestReview15ConnWriteAfterRefusedMultiLostReplyIsUnknown(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	_, err := server.Do("ACL", "SETUSER", "nomulti", "on", ">nomultipw", "~*", "&*", "+@all", "-multi")
	require.NoError(t, err)
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Pool.Username, cfg.Pool.Password = "nomulti", "nomultipw"
	cfg.Pool.ReadTimeout = time.Minute
	cfg.Health.Interval = -1
	c := newClient(t, cfg)

	conn := c.Conn()
	defer conn.Close()
	_, err = conn.Do("WATCH", "r15rm:k")
	require.NoError(t, err)
	require.NoError(t, conn.Send("MULTI"))
	require.NoError(t, conn.Send("SET", "r15rm:k", "v"))

	// The server holds the SET (a write) unanswered while writes are
	// paused; its connection is then killed.
	_, err = server.Do("CLIENT", "PAUSE", "60000", "WRITE")
	require.NoError(t, err)
	unpaused := false
	unpause := func() {
		if !unpaused {
			unpaused = true
			_, err := server.Do("CLIENT", "UNPAUSE")
			require.NoError(t, err)
		}
	}
	defer unpause()
	flushed := make(chan error, 1)
	go func() { flushed <- conn.Flush() }()
	waitFor(t, 20*time.Second, "the SET to be held by the pause", func() bool {
		list, err := server.Do("CLIENT", "LIST")
		require.NoError(t, err)
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, " user=nomulti ") && strings.Contains(line, " cmd=set ") {
				return true
			}
		}
		return false
	})
	_, err = server.Do("CLIENT", "KILL", "USER", "nomulti")
	require.NoError(t, err)
	unpause()
	select {
	case err = <-flushed:
	case <-time.After(30 * time.Second):
		t.Fatal("Flush did not return once the connection was killed")
	}
	require.NoError(t, err)

	_, err = redis.ReceiveWithTimeout(conn, 10*time.Second)
	requireNoPerm(t, err, "the refused MULTI")
	_, err = redis.ReceiveWithTimeout(conn, 10*time.Second)
	require.Error(t, err)
	var uo *shard.UnknownOutcomeError
	require.True(t, errors.As(err, &uo), "the SET ran at once, its reply lost: %v (%T)", err, err)
	require.Equal(t, "SET", uo.Command)
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "%v", err)
}
