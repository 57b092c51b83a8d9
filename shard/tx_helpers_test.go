package shard_test

import (
	"context"
	"errors"
	"strconv"
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

// noMultiRing starts one server and a ring client over it that logs in
// as an ACL user that may run everything but MULTI (the server refuses
// its MULTI with NOPERM), with a read timeout of a minute and no health
// checks.
func noMultiRing(t *testing.T) (*shard.Client, *redistest.Server) {
	t.Helper()
	server := redistest.StartTB(t, redistest.Options{})
	_, err := server.Do("ACL", "SETUSER", "nomulti", "on", ">nomultipw", "~*", "&*", "+@all", "-multi")
	require.NoError(t, err)
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Pool.Username, cfg.Pool.Password = "nomulti", "nomultipw"
	cfg.Pool.ReadTimeout = time.Minute
	cfg.Health.Interval = -1
	return newClient(t, cfg), server
}

// partialCoverageCluster starts a cluster of three masters that serves
// the slots it still has when others lost their master
// (cluster-require-full-coverage no), and returns it and its masters.
func partialCoverageCluster(t *testing.T) (*redistest.Cluster, []*redistest.Server) {
	t.Helper()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--cluster-require-full-coverage", "no"}})
	m := rc.Masters()
	require.Len(t, m, 3)
	return rc, m
}

// txClusterConfig returns a config for rc without health checks, whose
// operations wait up to maxRetryWait across redirects and refusals.
func txClusterConfig(rc *redistest.Cluster, maxRetryWait time.Duration) shard.Config {
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Health.Interval = -1
	cfg.Cluster.MaxRetryWait = maxRetryWait
	return cfg
}

// learnSlotOwner reads key through c, so that c knows its slot's master.
func learnSlotOwner(ctx context.Context, t *testing.T, c *shard.Client, key string) {
	t.Helper()
	_, err := c.Do(ctx, "GET", key)
	require.NoError(t, err)
}

// delSlot makes s stop serving slot (CLUSTER DELSLOTS).
func delSlot(t *testing.T, s *redistest.Server, slot int) {
	t.Helper()
	_, err := s.Do("CLUSTER", "DELSLOTS", strconv.Itoa(slot))
	require.NoError(t, err)
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
