package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/shard"
)

// Every call on a closed Conn fails with an error a caller can match
// (errors.Is ErrConnClosed), not with ErrClosed, which says the Client is
// gone: the Client stays usable.
func TestConnClosedErrorIsMatchable(t *testing.T) {
	client, _ := startRing(t, 2)
	ctx := context.Background()
	cases := []struct {
		name string
		call func(c redis.Conn) error
	}{
		{"Do", func(c redis.Conn) error { _, err := c.Do("GET", "k"); return err }},
		{"DoContext", func(c redis.Conn) error { _, err := redis.DoContext(c, ctx, "GET", "k"); return err }},
		{"Send", func(c redis.Conn) error { return c.Send("GET", "k") }},
		{"Flush", func(c redis.Conn) error { return c.Flush() }},
		{"Receive", func(c redis.Conn) error { _, err := c.Receive(); return err }},
		{"Err", func(c redis.Conn) error { return c.Err() }},
		{"MULTI in flight", func(c redis.Conn) error { _, err := c.Do("EXEC"); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := client.Conn()
			if tc.name == "MULTI in flight" {
				if _, err := c.Do("MULTI"); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Do("SET", "k", "v"); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			err := tc.call(c)
			if !errors.Is(err, shard.ErrConnClosed) {
				t.Fatalf("after Close: %v, want ErrConnClosed", err)
			}
			if errors.Is(err, shard.ErrClosed) {
				t.Fatalf("after Close: %v also matches ErrClosed, but the Client is open", err)
			}
		})
	}
	// The discarded transaction wrote nothing, and the Client still works.
	n, err := redis.Int(client.Do(ctx, "EXISTS", "k"))
	if err != nil || n != 0 {
		t.Fatalf("EXISTS k = %d, %v; want 0 (the transaction was discarded)", n, err)
	}
}
