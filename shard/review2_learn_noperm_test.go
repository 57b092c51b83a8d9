package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestLearnRefusedKeepsTheServersReply checks that when the server refuses
// COMMAND INFO (an ACL user without +command), the error for a command the
// client must learn is ErrUnknownCommand and also carries the server's own
// reply, matchable with errors.As: the user sees a permission problem, not
// only "unknown command".
func TestLearnRefusedKeepsTheServersReply(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{
		Args: []string{"--rename-command", "SET", "STORE"},
		Users: []redistest.User{
			{Name: "admin", Password: "admin-pw"},
			{Name: "app", Password: "app-pw", Rules: "~* &* +@all -command"},
		},
	})
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "app", "app-pw"
	c := newClient(t, cfg)

	_, err := c.Do(ctx, "STORE", "k", "v")
	if !errors.Is(err, shard.ErrUnknownCommand) {
		t.Fatalf("STORE without the right to learn it: %v, want ErrUnknownCommand", err)
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) || !strings.HasPrefix(string(rerr), "NOPERM") {
		t.Fatalf("STORE: %v: the server's NOPERM reply is not matchable (got %q)", err, rerr)
	}
}
