package pool

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// TestEveryLeftStateIsUndone: whatever a caller leaves on a connection —
// a subscription, MONITOR, an open transaction, RESP3, silenced replies,
// another ACL user, a name of its own — the next caller's connection is
// in the fresh state: RESP2, the configured user, database and name, no
// flags, and it answers its own commands (no reply left over from the
// last caller, none missing).
func TestEveryLeftStateIsUndone(t *testing.T) {
	srv := startServer(t, redistest.Options{Users: []redistest.User{
		{Name: "app", Password: "pw"}, {Name: "other", Password: "pw2"}}})
	tests := []struct {
		name string
		run  func(c redis.Conn) error
	}{
		{"SUBSCRIBE", func(c redis.Conn) error { _, err := c.Do("SUBSCRIBE", "a", "b", "c"); return err }},
		{"PSUBSCRIBE unflushed", func(c redis.Conn) error { return c.Send("PSUBSCRIBE", "p*") }},
		{"SUBSCRIBE and SSUBSCRIBE", func(c redis.Conn) error {
			if _, err := c.Do("SUBSCRIBE", "a"); err != nil {
				return err
			}
			_, err := c.Do("SSUBSCRIBE", "s")
			return err
		}},
		{"MONITOR", func(c redis.Conn) error { _, err := c.Do("MONITOR"); return err }},
		{"MULTI with queued commands", func(c redis.Conn) error {
			for _, cmd := range [][]any{{"WATCH", "k"}, {"MULTI"}, {"SET", "k", "left"}} {
				if _, err := c.Do(cmd[0].(string), cmd[1:]...); err != nil {
					return err
				}
			}
			return nil
		}},
		{"HELLO 3", func(c redis.Conn) error { c.Do("HELLO", 3); return nil }},
		{"CLIENT REPLY SKIP", func(c redis.Conn) error {
			if err := c.Send("CLIENT", "REPLY", "SKIP"); err != nil {
				return err
			}
			return c.Flush()
		}},
		{"CLIENT NO-TOUCH", func(c redis.Conn) error { c.Do("CLIENT", "NO-TOUCH", "on"); return nil }},
		{"AUTH other", func(c redis.Conn) error { _, err := c.Do("AUTH", "other", "pw2"); return err }},
		{"HELLO 2 AUTH SETNAME", func(c redis.Conn) error {
			_, err := c.Do("HELLO", 2, "AUTH", "other", "pw2", "SETNAME", "mine")
			return err
		}},
		{"BLPOP sent, not read", func(c redis.Conn) error {
			if err := c.Send("BLPOP", "empty", 0); err != nil {
				return err
			}
			return c.Flush()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{Username: "app", Password: "pw", DB: 3, ClientName: "topo",
				TestOnBorrow: Never, ReadTimeout: 500 * time.Millisecond})
			ctx := context.Background()
			c, err := set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.run(c); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			c.Close()

			c, err = set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Do("PUBLISH", "a", "x"); err != nil {
				t.Fatal(err)
			}
			if reply, err := c.Do("ECHO", "mine"); err != nil || string(reply.([]byte)) != "mine" {
				t.Fatalf("the next caller's ECHO = %v, %v: a reply left over or missing", reply, err)
			}
			info, err := redis.String(c.Do("CLIENT", "INFO"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{" db=3 ", " name=topo ", " flags=N ", " sub=0 ", " psub=0 ", " multi=-1 ", " user=app ", " resp=2"} {
				if !strings.Contains(info, want) {
					t.Errorf("the next caller's connection is not fresh: CLIENT INFO %q lacks %q", info, want)
				}
			}
		})
	}
}
