package shard_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9CommandAfterAMoveIsTimedFromItsSend: during a migration a
// write whose key sits at its old owner moves it first (a MIGRATE there,
// a Command event on the old owner), then runs at the new owner. The
// command's own event must cover its round trip at the new owner only:
// it took its start from the operation's, so its Duration, the duration
// histogram's measurement for the new owner, included the MIGRATE at
// the old one.
func TestReview9CommandAfterAMoveIsTimedFromItsSend(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)
	k := movingKeys(t, from, to, "r9mt:", 1)[0]
	oldAddr, newAddr := ringOwner(t, from, k), ringOwner(t, to, k)
	// A value big enough that its MIGRATE takes a while.
	big := make([]byte, 8<<20)
	_, err := byAddr[oldAddr].Do("SET", k, string(big))
	require.NoError(t, err)

	type ev struct {
		node, name string
		start      time.Time
		took       time.Duration
	}
	var (
		mu  sync.Mutex
		evs []ev
	)
	cfg := armedConfig(from, to)
	cfg.Pool.ReadTimeout = 10 * time.Second
	cfg.Hooks = &shard.Hooks{
		Start: func(ctx context.Context, _ *shard.Op) context.Context { return ctx },
		Command: func(_ context.Context, e *shard.CommandEvent) {
			mu.Lock()
			defer mu.Unlock()
			evs = append(evs, ev{e.Node.Addr, e.Name, e.Start, e.Duration})
		},
	}
	c := newClient(t, cfg)
	_, err = c.Do(ctx, "APPEND", k, "x")
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, evs, 2, "%v", evs)
	mig, cmd := evs[0], evs[1]
	require.Equal(t, []string{oldAddr, "MIGRATE"}, []string{mig.node, mig.name})
	require.Equal(t, []string{newAddr, "APPEND"}, []string{cmd.node, cmd.name})
	migEnd := mig.start.Add(mig.took)
	assert.False(t, cmd.start.Before(migEnd), "the APPEND was sent after the MIGRATE ended (%v), not at %v", migEnd, cmd.start)
	assert.Less(t, cmd.took, mig.took, "the APPEND's round trip (%v) does not hold the MIGRATE's (%v)", cmd.took, mig.took)
}
