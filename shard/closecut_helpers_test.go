package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// startCloseCut makes a client of cfg whose hooks the returned recorder
// records, runs call with it in a goroutine, waits until a client of one
// of servers is blocked in cmd (lower case), closes the client and
// returns what call returned. what names call in the failure when it has
// not returned 15 seconds after Close.
func startCloseCut(t *testing.T, cfg shard.Config, servers []*redistest.Server, cmd, what string, call func(c *shard.Client) error) (*recorder, error) {
	t.Helper()
	rec := &recorder{}
	cfg.Hooks = rec.hooks()
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- call(c) }()
	waitFor(t, 15*time.Second, cmd+" in flight", func() bool {
		for _, s := range servers {
			if r16BlockedOn(s, cmd) {
				return true
			}
		}
		return false
	})
	require.NoError(t, c.Close())
	select {
	case err := <-done:
		return rec, err
	case <-time.After(15 * time.Second):
		t.Fatalf("%s did not return after Close", what)
		return rec, nil
	}
}

// lentDo runs do on the connection c lends to a ForEachShard function
// and returns ForEachShard's error, or else do's.
func lentDo(c *shard.Client, do func(conn redis.Conn) error) error {
	var doErr error
	err := c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		doErr = do(conn)
		return nil
	})
	if err == nil {
		err = doErr
	}
	return err
}
