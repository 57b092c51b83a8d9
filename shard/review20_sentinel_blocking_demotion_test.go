package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A BLPOP blocked on a Sentinel shard's master when the master is demoted
// by a failover the Sentinels did not make (unseenFailover: a Sentinel's
// own failover kills the old master's clients, which leaves the BLPOP's
// outcome unknown) is unblocked by the server with UNBLOCKED: it popped
// nothing, and the new master serves it, as it serves a write the demoted
// master refused with READONLY. The caller gets the element pushed there,
// not the server's UNBLOCKED.
func TestReview20SentinelBlockingSurvivesDemotion(t *testing.T) {
	set, cfg := loneSentinel(t)
	cfg.Sentinel.FailoverWait = 20 * time.Second
	c := newClient(t, cfg)
	m, err := set.Master(0)
	require.NoError(t, err)
	type result struct {
		v   []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := redis.Strings(c.Do(context.Background(), "BLPOP", "r20sbl", 60))
		done <- result{v, err}
	}()
	waitFor(t, 10*time.Second, "the BLPOP blocked on the master", func() bool { return blockedClients(m) >= 1 })
	_, next := unseenFailover(t, set)
	// Pushed at the new master once the BLPOP waits there again.
	awaitBlockedAgain(t, next, 20*time.Second, done, func(r result) {
		require.NoError(t, r.err, "the BLPOP unblocked by the demotion")
		t.Fatalf("BLPOP returned %q before anything was pushed", r.v)
	})
	_, err = next.Do("RPUSH", "r20sbl", "after")
	require.NoError(t, err)
	select {
	case r := <-done:
		require.NoError(t, r.err, "the BLPOP unblocked by the demotion")
		assert.Equal(t, []string{"r20sbl", "after"}, r.v)
	case <-time.After(60 * time.Second):
		t.Fatal("BLPOP did not return")
	}
}
