package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
)

// docs/sentinel.md: "A Sentinel that refuses its credentials fails the
// query with a *pool.AuthError, as a data node does, so
// errors.Is(err, pool.ErrAuth) tells wrong credentials from Sentinels that
// are down." Both halves, against real Sentinels: the refusal is found by
// errors.As as a *pool.AuthError, and Sentinels that do not answer at all
// give an error that does not match pool.ErrAuth.
func TestReview11SentinelErrorKindsAsDocumented(t *testing.T) {
	ctx := context.Background()
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, SentinelPassword: sentPW})

	wrong := sentinelConfig(set)
	wrong.Sentinel.Password = "not-the-sentinel-password"
	c, err := shard.New(ctx, wrong)
	if err == nil {
		c.Close()
		t.Fatal("New succeeded with a wrong Sentinel password")
	}
	var ae *pool.AuthError
	if !errors.As(err, &ae) {
		t.Errorf("wrong Sentinel password: %v, want an error holding a *pool.AuthError", err)
	}
	if !errors.Is(err, pool.ErrAuth) {
		t.Errorf("wrong Sentinel password: %v, want an error matching pool.ErrAuth", err)
	}

	gone := redistest.StartTB(t, redistest.Options{})
	goneAddr := gone.Addr
	if err := gone.Stop(); err != nil {
		t.Fatal(err)
	}
	down := sentinelConfig(set)
	down.Sentinel.Addrs = []string{goneAddr}
	c, err = shard.New(ctx, down)
	if err == nil {
		c.Close()
		t.Fatal("New succeeded with no Sentinel answering")
	}
	t.Logf("Sentinels down: %v", err)
	if errors.Is(err, pool.ErrAuth) {
		t.Errorf("Sentinels down: %v matches pool.ErrAuth, as if the credentials were wrong", err)
	}
	if !errors.Is(err, sentinel.ErrNoSentinel) {
		t.Errorf("Sentinels down: %v, want an error matching sentinel.ErrNoSentinel", err)
	}
}
