package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pipeline over two nodes whose context ends while the first (hung)
// node is read: the second node's replies, already there, are harvested.
// A NOAUTH among them (the node wants a password the client does not
// send) came back as the raw redis.Error, where the same reply read in
// time is a *pool.AuthError (errors.Is(err, pool.ErrAuth)): it is now
// the same authentication failure either way.
func TestReview7HarvestedNoAuthIsAnAuthError(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	hung, locked := servers[0], servers[1]
	cfg := shard.Config{
		Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: time.Second},
		Health: shard.HealthOptions{Interval: -1},
	}
	for i, s := range servers {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("s%d", i), Addr: s.Addr, Weight: 1})
	}
	cfg.DisableAutoPipeline = true
	c := newClient(t, cfg)
	ctx := context.Background()
	keyOn := func(s *redistest.Server) string {
		for i := range 1000 {
			k := fmt.Sprintf("r7auth:%d", i)
			n, err := c.Router().Route(k)
			require.NoError(t, err)
			if n.Addr == s.Addr {
				return k
			}
		}
		t.Fatalf("no key on %s", s.Addr)
		return ""
	}
	kHung, kLocked := keyOn(hung), keyOn(locked)
	// Warm both pools while they answer.
	for _, k := range []string{kHung, kLocked} {
		_, err := c.Do(ctx, "GET", k)
		require.NoError(t, err)
	}
	// The locked node turns on requirepass and drops its connections:
	// the client's next connection to it sends no AUTH.
	_, err := locked.Do("CONFIG", "SET", "requirepass", "r7-secret")
	require.NoError(t, err)
	admin, err := redis.Dial("tcp", locked.Addr, redis.DialPassword("r7-secret"))
	require.NoError(t, err)
	defer admin.Close()
	_, err = admin.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	require.NoError(t, err)
	defer func() { _, _ = admin.Do("CONFIG", "SET", "requirepass", "") }()
	// Read in time, NOAUTH is an authentication failure.
	_, err = c.Do(ctx, "GET", kLocked)
	require.ErrorIs(t, err, pool.ErrAuth)

	require.NoError(t, hung.Pause())
	defer func() { require.NoError(t, hung.Resume()) }()
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	p := c.Pipeline()
	p.Send("GET", kHung) // read first: the context ends while it waits
	p.Send("GET", kLocked)
	res, err := p.Exec(tctx)
	require.NoError(t, err)
	require.Len(t, res, 2)
	require.ErrorIs(t, res[0].Err, context.DeadlineExceeded)
	if errors.Is(res[1].Err, context.DeadlineExceeded) {
		t.Skip("the locked node's NOAUTH had not arrived when the context ended")
	}
	assert.ErrorIs(t, res[1].Err, pool.ErrAuth, "harvested NOAUTH: %v", res[1].Err)
	var ae *pool.AuthError
	assert.ErrorAs(t, res[1].Err, &ae)
	var re redis.Error
	assert.ErrorAs(t, res[1].Err, &re, "the server's reply stays reachable")
	assert.NotContains(t, res[1].Err.Error(), "r7-secret")
}
