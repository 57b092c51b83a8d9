package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

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
	rc := clusterForTest(t)
	m := rc.Masters()
	a, b := m[0], m[1]
	key, slot := keyOnMaster(t, rc, a, "review2backoff")
	cfg := clusterConfig(rc.Seeds()...)
	const wait = 7 * time.Second
	cfg.Cluster.MaxRetryWait = wait
	c := newClient(t, cfg)
	_, err := c.Do(ctx, "SET", key+"1", "x")
	require.NoError(t, err)
	setSlot(t, b, fmt.Sprint(slot), "IMPORTING", nodeID(t, a))
	setSlot(t, a, fmt.Sprint(slot), "MIGRATING", nodeID(t, b))
	t.Cleanup(func() {
		setSlot(t, a, fmt.Sprint(slot), "STABLE")
		setSlot(t, b, fmt.Sprint(slot), "STABLE")
		direct(t, a.Addr).Do("DEL", key+"1")
	})
	// One key exists on the source, one does not: TRYAGAIN until the
	// budget is spent.
	start := time.Now()
	_, err = c.Do(ctx, "MGET", key+"1", key+"2")
	took := time.Since(start)
	var re *shard.RetryError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Last, "TRYAGAIN")
	// Waits of 5, 10, 20, 40, 80 ms and then 100 ms each: at most about
	// 75 attempts in 7 s (fewer on a slow machine). Twice that is the
	// bound; a busy loop makes hundreds of thousands.
	assert.Less(t, re.Attempts, 150, "attempts in %v", took)
	assert.Greater(t, took, wait/2, "the budget was spent waiting")
}
