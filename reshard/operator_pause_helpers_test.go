package reshard

import (
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
)

// requireWritesHeldUntilUnpause checks that an operator's CLIENT PAUSE
// ... WRITE is still on at s: a SET from a new client named name waits
// (CLIENT LIST shows it blocked, flag b) rather than running, and runs
// once CLIENT UNPAUSE lifts the pause.
func requireWritesHeldUntilUnpause(t *testing.T, s *redistest.Server, name string) {
	t.Helper()
	w, err := redis.Dial("tcp", s.Addr, redis.DialReadTimeout(time.Minute))
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Do("CLIENT", "SETNAME", name)
	require.NoError(t, err)
	wrote := make(chan error, 1)
	go func() {
		_, err := w.Do("SET", "w", "1")
		wrote <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for held := false; !held; {
		select {
		case err := <-wrote:
			t.Fatalf("a write ran on the old node (err %v): the mover lifted the operator's pause", err)
		default:
		}
		list, err := s.Do("CLIENT", "LIST")
		require.NoError(t, err)
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, "name="+name+" ") && strings.Contains(line, "cmd=set ") && strings.Contains(line, "flags=b") {
				held = true
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer neither wrote nor waited within 30s:\n%s", list)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err = s.Do("CLIENT", "UNPAUSE")
	require.NoError(t, err)
	require.NoError(t, <-wrote, "the write runs once the operator lifts the pause")
}
