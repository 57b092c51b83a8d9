package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The backoff between retries grows from 5 ms to 100 ms and stays there
// for as long as MaxRetryWait allows. It used to double without bound and
// overflow after about 40 waits (some 4 s of waiting), after which it was
// zero or negative: the command then retried in a busy loop, hammering
// the node and a core, until MaxRetryWait ran out.
func TestReview2ClusterBackoffStaysBoundedOverALongWait(t *testing.T) {
	ctx := context.Background()
	const wait = 7 * time.Second
	c, key := tryAgainClient(t, wait, "review2backoff")
	// One key exists on the source, one does not: TRYAGAIN until the
	// budget is spent.
	start := time.Now()
	_, err := c.Do(ctx, "MGET", key+"1", key+"2")
	took := time.Since(start)
	re := requireBoundedRetries(t, err, took, wait)
	assert.Contains(t, re.Last, "TRYAGAIN")
}

// tryAgainClient starts a cluster and a client on it whose MaxRetryWait is
// wait, and returns the client with a hash tag from tryAgainSlot (prefix
// names it): a command on tag+"1" and tag+"2" meets TRYAGAIN until wait
// is spent.
func tryAgainClient(t *testing.T, wait time.Duration, prefix string) (*shard.Client, string) {
	t.Helper()
	rc := clusterForTest(t)
	m := rc.Masters()
	a, b := m[0], m[1]
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.MaxRetryWait = wait
	c := newClient(t, cfg)
	return c, tryAgainSlot(t, rc, a, b, prefix)
}

// requireBoundedRetries checks err, from a command that retried for its
// whole budget wait and took took: a *shard.RetryError (returned), whose
// attempts were spaced by the backoff, not a busy loop, and that spent
// the budget waiting.
func requireBoundedRetries(t *testing.T, err error, took, wait time.Duration) *shard.RetryError {
	t.Helper()
	var re *shard.RetryError
	require.ErrorAs(t, err, &re)
	// Waits of 5, 10, 20, 40, 80 ms and then 100 ms each: at most about
	// 75 attempts in 7 s (fewer on a slow machine). Twice that is the
	// bound; a busy loop makes hundreds of thousands.
	assert.Less(t, re.Attempts, 150, "attempts in %v", took)
	assert.Greater(t, took, wait/2, "the budget was spent waiting")
	return re
}

// tryAgainSlot returns a hash tag "{…}" whose slot master a is migrating
// to master b, with the key tag+"1" on a and tag+"2" on neither: a
// command on both keys meets TRYAGAIN until the test ends, when the slot
// is made stable again and the keys deleted.
func tryAgainSlot(t *testing.T, rc *redistest.Cluster, a, b *redistest.Server, prefix string) string {
	t.Helper()
	tag, slot := keyOnMaster(t, rc, a, prefix)
	_, err := direct(t, a.Addr).Do("SET", tag+"1", "x")
	require.NoError(t, err)
	t.Cleanup(func() { direct(t, a.Addr).Do("DEL", tag+"1", tag+"2") }) // once the slot is stable again
	migratingSlot(t, slot, a, b)
	return tag
}
