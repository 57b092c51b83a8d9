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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// busyScript increments its key, then keeps the server busy for 3 s.
const busyScript = `redis.call('INCR', KEYS[1])
local s = redis.call('TIME')
while true do
  local n = redis.call('TIME')
  if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 3000000 then break end
end
return 1`

// TestClusterScriptCutOffIsAnUnknownOutcome: EVAL carries no write flag,
// yet its script may write. When the node dies after the script was sent,
// the client must not send it again elsewhere (that could apply it
// twice): the caller gets an *UnknownOutcomeError at once, not a retry
// that ends in a RetryError or, after a failover, a second INCR.
func TestClusterScriptCutOffIsAnUnknownOutcome(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{
		NodeTimeout: time.Minute,
		Args:        []string{"--busy-reply-threshold", "50"},
	})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Health.Interval = -1
	cfg.Cluster.MaxRetryWait = 3 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	const key = "outcome:k"
	node, err := c.Router().Route(key)
	require.NoError(t, err)
	var victim *redistest.Server
	for _, s := range rc.Masters() {
		if s.Addr == node.Addr {
			victim = s
		}
	}
	require.NotNil(t, victim)

	type result struct {
		err error
		end time.Time
	}
	done := make(chan result, 1)
	go func() {
		_, err := c.Do(ctx, "EVAL", busyScript, 1, key)
		done <- result{err: err, end: time.Now()}
	}()
	// The server answers BUSY to others once the script has run for the
	// busy-reply threshold: then the script has been sent and is running.
	waitFor(t, 10*time.Second, "the script to keep the server busy", func() bool {
		conn, err := redis.Dial("tcp", victim.Addr, redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(time.Second), redis.DialWriteTimeout(time.Second))
		if err != nil {
			return false
		}
		defer conn.Close()
		_, err = conn.Do("PING")
		return err != nil && strings.HasPrefix(err.Error(), "BUSY")
	})
	killedAt := time.Now()
	require.NoError(t, victim.Kill())
	select {
	case r := <-done:
		var uo *shard.UnknownOutcomeError
		require.ErrorAs(t, r.err, &uo, "%v", r.err)
		assert.False(t, errors.Is(r.err, shard.ErrRetryBudget), "%v", r.err)
		assert.Less(t, r.end.Sub(killedAt), 2*time.Second, "the outcome is known to be unknown at once, not after retries")
	case <-time.After(20 * time.Second):
		t.Fatal("EVAL still running 20 s after its node was killed")
	}
}
