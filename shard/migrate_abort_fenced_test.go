package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAbortWhileFencedEndsTheWaitAtTheFence aborts a migration whose fence
// is up but not armed while a command on a moving key waits there. The
// command must not wait out the read timeout for an arming that can no
// longer come: it ends at once, not sent, and the key is served at its old
// owner afterwards.
func TestAbortWhileFencedEndsTheWaitAtTheFence(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, to := ringConfig(servers[:1]), ringConfig(servers)
	to.Pool.ReadTimeout = 30 * time.Second // the fence's wait is bounded by it
	var k string
	for i := 0; ; i++ {
		k = fmt.Sprintf("abortfenced:%d", i)
		if ringOwner(t, to, k) != servers[0].Addr {
			break
		}
	}
	_, err := servers[0].Do("SET", k, "7")
	require.NoError(t, err)
	cfg := to
	cfg.Migration = &shard.Migration{From: &from}
	c := newClient(t, cfg)
	info, _ := c.Migration()
	_, err = servers[0].Do("SET", shard.FenceKey(info.FromID, info.ToID), shard.FenceValue(shard.PhaseFenced, time.Now()))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseFenced
	}, 20*time.Second, 10*time.Millisecond)

	type result struct {
		v   any
		err error
		d   time.Duration
	}
	done := make(chan result, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		start := time.Now()
		v, err := c.Do(ctx, "INCR", k)
		done <- result{v, err, time.Since(start)}
	}()
	<-started
	// Give the INCR time to reach the fence: with the bug it then waits
	// the whole read timeout; if it comes later it is planned by the old
	// topology and must simply succeed there.
	select {
	case r := <-done:
		t.Fatalf("INCR returned while the fence was up: %v, %v", r.v, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, c.AbortMigration(ctx))
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the INCR waiting at the fence kept waiting after AbortMigration")
	}
	want := "7"
	if r.err == nil {
		assert.EqualValues(t, 8, r.v)
		want = "8"
	} else {
		require.ErrorIs(t, r.err, shard.ErrMigration)
		var me *shard.MigrateError
		require.True(t, errors.As(r.err, &me), "%v", r.err)
		assert.False(t, me.Sent, "a command that waited at the fence was never sent")
	}
	assert.Equal(t, []string{servers[0].Addr}, holders(t, servers, k), "nothing moved")
	got, err := redis.String(servers[0].Do("GET", k))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	// Routed by the old topology again: the key is found where it is.
	v, err := redis.Int(c.Do(ctx, "INCR", k))
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"7": 8, "8": 9}[want], v)
}
