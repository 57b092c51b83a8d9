package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// A cluster master that refuses the client's credentials (its password
// rotated on the server) fails the command at once, and the Command hook
// says so: one attempt, the server's refusal that stands (server_error, as
// for NOAUTH), not a retry, since the client sends it nowhere again.
func TestClusterAuthFailureIsNoRetryInTheHooks(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pass-0"},
		{Name: "app", Password: "old-pass-1"},
	}})
	rec := &recorder{}
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: rc.Seeds()}
	cfg.Pool = pool.Options{Username: "app", Password: "old-pass-1", DialTimeout: time.Second, ReadTimeout: time.Second}
	cfg.Health.Interval = -1
	cfg.DisableAutoPipeline = true
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)
	ctx := context.Background()
	node, err := c.Router().Route("auth:k")
	if err != nil {
		t.Fatal(err)
	}
	var target *redistest.Server
	for _, s := range rc.Masters() {
		if s.Addr == node.Addr {
			target = s
		}
	}
	if target == nil {
		t.Fatal("no master for auth:k")
	}
	if _, err := c.Do(ctx, "SET", "auth:k", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := target.Do("ACL", "SETUSER", "app", "resetpass", ">new-pass-3"); err != nil {
		t.Fatal(err)
	}
	if _, err := target.Do("CLIENT", "KILL", "USER", "app"); err != nil {
		t.Fatal(err)
	}
	rec.reset()
	_, err = c.Do(ctx, "GET", "auth:k")
	if !errors.Is(err, pool.ErrAuth) {
		t.Fatalf("GET = %v, want an error matching pool.ErrAuth", err)
	}
	got := rec.snapshot()
	if len(got.commands) != 1 {
		t.Fatalf("the Command hook saw %d attempts, want 1 (an authentication failure is not sent again)", len(got.commands))
	}
	if o := got.commands[0].Outcome; o != shard.OutcomeServerError {
		t.Errorf("the attempt's outcome is %s, want server_error", o)
	}
}
