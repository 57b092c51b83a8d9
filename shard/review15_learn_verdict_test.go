package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestLearnBadKeyCountDoesNotRefuseTheCommand: EVAL renamed RUN is
// learned on its first call. When that call's key count is not a number,
// the key specs refuse the call while COMMAND GETKEYS answers with no
// keys (EVAL may have none): the two disagree about these arguments
// only. That call fails, but the calls that follow with a good key count
// run, with no wait.
func TestLearnBadKeyCountDoesNotRefuseTheCommand(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{Args: []string{"--rename-command", "EVAL", "RUN"}})
	c := newClient(t, ringConfig(servers))

	if _, err := c.Do(ctx, "RUN", "return 1", "notanumber"); err == nil {
		t.Fatal("RUN with a key count that is not a number succeeded")
	}
	got, err := redis.String(c.Do(ctx, "RUN", "return KEYS[1]", 1, "verdict:k"))
	if err != nil || got != "verdict:k" {
		t.Fatalf("RUN with a good key count after one with a bad key count = %q, %v (unknown: %t); want \"verdict:k\"",
			got, err, errors.Is(err, shard.ErrUnknownCommand))
	}

	// The same on a fresh client inside a transaction, which learns
	// before queueing.
	c2 := newClient(t, ringConfig(servers))
	if _, err := c2.Tx(ctx, []string{"verdict:k"}, func(tx *shard.Tx) error {
		return tx.Queue("RUN", "return 1", "-1")
	}); err == nil {
		t.Fatal("a transaction queueing RUN with a negative key count succeeded")
	}
	res, err := c2.Tx(ctx, []string{"verdict:k"}, func(tx *shard.Tx) error {
		return tx.Queue("RUN", "return KEYS[1]", 1, "verdict:k")
	})
	if err != nil || len(res) != 1 {
		t.Fatalf("a transaction queueing RUN with a good key count after a bad one: %v, %v", res, err)
	}
}
