package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// killClientRunning kills the connection of servers[0] whose last command
// is cmd, once there is one.
func killClientRunning(t *testing.T, s *redistest.Server, cmd string) {
	t.Helper()
	var id string
	waitFor(t, 15*time.Second, "a connection running "+cmd, func() bool {
		list, err := s.Do("CLIENT", "LIST")
		if err != nil {
			return false
		}
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, " cmd="+cmd+" ") {
				id = strings.TrimPrefix(strings.Fields(line)[0], "id=")
				return true
			}
		}
		return false
	})
	_, err := s.Do("CLIENT", "KILL", "ID", id)
	require.NoError(t, err)
}

// TestReview15ConnWatchLostSaysKeysUnwatched: on a Conn under WATCH, the
// watching connection dies (killed by the server, found out by a command
// sent on it); the next MULTI and the EXEC after it are refused, and
// their error must say why: the watched keys are no longer watched. It
// stays a *NodeError of the node, and wraps the *UnknownOutcomeError of a
// write whose reply was lost with the connection.
func TestReview15ConnWatchLostSaysKeysUnwatched(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	s := servers[0]
	c := newClient(t, ringConfig(servers))
	const phrase = "the watched keys are no longer watched"
	for _, tc := range []struct {
		name     string
		lostCall func(t *testing.T, conn interface {
			Do(string, ...any) (any, error)
		}, key string) error
		unknown bool
	}{
		{"read on a dead connection", func(t *testing.T, conn interface {
			Do(string, ...any) (any, error)
		}, key string) error {
			killClientRunning(t, s, "watch")
			_, err := conn.Do("GET", key)
			return err
		}, false},
		{"write cut off", func(t *testing.T, conn interface {
			Do(string, ...any) (any, error)
		}, key string) error {
			done := make(chan error, 1)
			go func() {
				_, err := conn.Do("BLPOP", key+":list", 0)
				done <- err
			}()
			killClientRunning(t, s, "blpop")
			select {
			case err := <-done:
				return err
			case <-time.After(15 * time.Second):
				t.Fatal("BLPOP did not fail after its connection was killed")
				return nil
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "{r15wl}:" + tc.name
			conn := c.Conn()
			defer conn.Close()
			_, err := conn.Do("WATCH", key)
			require.NoError(t, err)
			require.Error(t, tc.lostCall(t, conn, key), "the command on the killed connection")
			_, multi := conn.Do("MULTI")
			_, set := conn.Do("SET", key, "v")
			_, exec := conn.Do("EXEC")
			for what, err := range map[string]error{"MULTI": multi, "SET in MULTI": set, "EXEC": exec} {
				require.Error(t, err, what)
				assert.Contains(t, err.Error(), phrase, what)
				var ne *shard.NodeError
				if assert.ErrorAs(t, err, &ne, what) {
					assert.Equal(t, s.Addr, ne.Node.Addr, what)
				}
				var uo *shard.UnknownOutcomeError
				assert.Equal(t, tc.unknown, errors.As(err, &uo), "%s wraps an *UnknownOutcomeError: %v", what, err)
				assert.NotErrorIs(t, err, shard.ErrTxAborted, what)
			}
			v, err := c.Do(ctx, "GET", key)
			require.NoError(t, err)
			assert.Nil(t, v, "the refused transaction ran its SET")
		})
	}
}
