package shard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A Conn's write under WATCH whose reply was lost with its connection may
// have run: the next MULTI is refused with an error that says so (it
// wraps the write's *UnknownOutcomeError), also after the caller watched
// again on a fresh connection. When that fresh WATCH was planned by a
// migration's old topology and its next run came after the fence's
// switch, the refusal for the switch replaced the one for the lost write:
// MULTI failed with an error that matches ErrTxAborted alone, which
// callers run again at once, and the write that may have run went
// unmentioned.
func TestReview16ConnFencedAfterLostWriteKeepsIt(t *testing.T) {
	s := newSwitchSetup(t, 5*time.Second)
	c := s.migrating(t, nil)
	k := s.moving(t, "r16fl", 1)[0]
	big := strings.Repeat("z", 256<<10)
	setLimit := func(limit string) {
		t.Helper()
		for _, srv := range s.servers {
			_, err := srv.Do("CONFIG", "SET", "client-output-buffer-limit", limit)
			require.NoError(t, err)
		}
	}
	t.Cleanup(func() {
		for _, srv := range s.servers {
			_, _ = srv.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
		}
	})

	conn := c.Conn()
	defer conn.Close()
	_, err := conn.Do("WATCH", k) // planned by the old topology
	require.NoError(t, err)
	_, err = conn.Do("SET", k, big)
	require.NoError(t, err)
	setLimit("normal 64kb 0 0")
	// The old value, over the output buffer limit: the server closes the
	// connection once the write ran.
	_, err = conn.Do("SET", k, "new", "GET")
	var uo *shard.UnknownOutcomeError
	require.ErrorAs(t, err, &uo, "SET ... GET with a reply over the output buffer limit")
	setLimit("normal 0 0 0")

	_, err = conn.Do("WATCH", k) // a fresh connection, still by the old topology
	require.NoError(t, err)
	s.fenceAndArm(t, c)
	_, err = conn.Do("GET", k)
	require.ErrorIs(t, err, shard.ErrFenceSwitched)
	_, err = conn.Do("MULTI")
	require.Error(t, err)
	require.ErrorAs(t, err, &uo, "MULTI's refusal hides that the write may have run: %v", err)
	require.Equal(t, "SET", uo.Command)
}

// The same when the fresh watching connection fails in turn: the second
// failure's refusal replaced the first, and MULTI no longer said that the
// write may have run.
func TestReview16ConnSecondWatchLossKeepsLostWrite(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	srv := servers[0]
	c := newClient(t, ringConfig(servers))
	big := strings.Repeat("z", 256<<10)
	t.Cleanup(func() { _, _ = srv.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0") })

	conn := c.Conn()
	defer conn.Close()
	_, err := conn.Do("WATCH", "r16sl")
	require.NoError(t, err)
	_, err = conn.Do("SET", "r16sl", big)
	require.NoError(t, err)
	_, err = srv.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 64kb 0 0")
	require.NoError(t, err)
	_, err = conn.Do("SET", "r16sl", "new", "GET")
	var uo *shard.UnknownOutcomeError
	require.ErrorAs(t, err, &uo, "SET ... GET with a reply over the output buffer limit")
	_, err = srv.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
	require.NoError(t, err)

	_, err = conn.Do("WATCH", "r16sl") // a fresh connection
	require.NoError(t, err)
	_, err = srv.Do("CLIENT", "KILL", "TYPE", "normal")
	require.NoError(t, err)
	_, err = conn.Do("GET", "r16sl")
	require.Error(t, err)
	_, err = conn.Do("MULTI")
	require.Error(t, err)
	require.ErrorAs(t, err, &uo, "MULTI's refusal hides that the write may have run: %v", err)
	require.Equal(t, "SET", uo.Command)
}
