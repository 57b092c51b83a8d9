package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// oneServerRing starts one server and a ring client over it whose pool
// has readTimeout.
func oneServerRing(t *testing.T, readTimeout time.Duration) (*shard.Client, *redistest.Server) {
	t.Helper()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout = readTimeout
	return newClient(t, cfg), servers[0]
}

// cancelOnceExecHeld pauses s's writes (CLIENT PAUSE ... WRITE, lifted
// when the test ends) and returns a context that it cancels once the
// server holds a transaction's EXEC (CLIENT LIST shows a client in MULTI
// and blocked, flags=xb), or after 10s. The channel then tells whether
// the EXEC was seen held (nil) or why not.
func cancelOnceExecHeld(t *testing.T, s *redistest.Server) (context.Context, <-chan error) {
	t.Helper()
	admin, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	_, err = admin.Do("CLIENT", "PAUSE", "20000", "WRITE")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.Do("CLIENT", "UNPAUSE") })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	watched := make(chan error, 1)
	go func() {
		defer cancel()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			s, err := redis.String(admin.Do("CLIENT", "LIST"))
			if err != nil {
				watched <- err
				return
			}
			if strings.Contains(s, "flags=xb") { // in MULTI, blocked: EXEC is held
				watched <- nil
				return
			}
			time.Sleep(5 * time.Millisecond) // polling the condition
		}
		watched <- errors.New("EXEC never reached the server")
	}()
	return ctx, watched
}
