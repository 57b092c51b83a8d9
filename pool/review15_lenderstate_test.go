package pool

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReview15LenderReturnHandsOnFreshConn: a connection borrowed through
// the redigo pool that Set.Pool returns is given back through two of
// redigo's activeConns (the lender's, then the Set's). Whatever state its
// caller left on it (a database, client-side tracking, silenced replies,
// READONLY, an open transaction, a watch, a subscription with messages
// unread, MONITOR, a blocking command unanswered), the next borrower of
// the same address, through Set.Pool or Set.Get, must get a connection in
// the fresh state that answers its own commands: a connection whose state
// the pool does not undo must be a new one (another CLIENT ID), and keys
// watched by the last caller must not make the next one's EXEC fail.
func TestReview15LenderReturnHandsOnFreshConn(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	const (
		db      = 2
		watched = "review15:lender:watched"
		channel = "review15:lender:ch"
	)
	publish := func(c redis.Conn) error {
		waitSubscribers(t, admin, channel)
		for range 3 {
			if _, err := admin.Do("PUBLISH", channel, "m"); err != nil {
				return err
			}
		}
		return nil
	}
	tests := []struct {
		name  string
		cmds  [][]any
		after func(c redis.Conn) error // run after cmds were sent and flushed
		// reused: the pool undoes what cmds leave (redigo's return) and
		// may hand the same connection on; otherwise it must not.
		reused bool
	}{
		{name: "GET (stateless)", cmds: [][]any{{"GET", "k"}}, reused: true},
		{name: "SELECT 1", cmds: [][]any{{"SELECT", 1}}},
		{name: "select in lower case", cmds: [][]any{{"select", 0}}},
		{name: "CLIENT TRACKING on", cmds: [][]any{{"CLIENT", "TRACKING", "on"}}},
		{name: "CLIENT TRACKING on OPTIN, CACHING yes", cmds: [][]any{{"CLIENT", "TRACKING", "on", "OPTIN"}, {"CLIENT", "CACHING", "yes"}}},
		{name: "CLIENT REPLY OFF", cmds: [][]any{{"CLIENT", "REPLY", "OFF"}}},
		{name: "CLIENT REPLY SKIP then SELECT", cmds: [][]any{{"CLIENT", "REPLY", "SKIP"}, {"SELECT", 7}, {"PING"}}},
		{name: "CLIENT NO-EVICT on", cmds: [][]any{{"CLIENT", "NO-EVICT", "on"}}},
		{name: "CLIENT SETNAME", cmds: [][]any{{"CLIENT", "SETNAME", "mine"}}},
		{name: "READONLY", cmds: [][]any{{"READONLY"}}},
		{name: "HELLO 3", cmds: [][]any{{"HELLO", 3}}},
		{name: "ASKING", cmds: [][]any{{"ASKING"}}},
		{name: "RESET", cmds: [][]any{{"RESET"}}},
		{name: "SSUBSCRIBE", cmds: [][]any{{"SSUBSCRIBE", "s"}}},
		{name: "MONITOR", cmds: [][]any{{"MONITOR"}}},
		{name: "BLPOP unanswered", cmds: [][]any{{"BLPOP", "review15:lender:empty", 0}}},
		{name: "WATCH", cmds: [][]any{{"WATCH", watched}}, reused: true},
		{name: "WATCH, MULTI, queued SET", cmds: [][]any{{"WATCH", watched}, {"MULTI"}, {"SET", watched, "left"}}, reused: true},
		{name: "MULTI, queued BLPOP", cmds: [][]any{{"MULTI"}, {"BLPOP", "review15:lender:empty", 0}}, reused: true},
		{name: "SUBSCRIBE, messages unread", cmds: [][]any{{"SUBSCRIBE", channel, channel + "2"}}, after: publish, reused: true},
		{name: "PSUBSCRIBE, replies unread", cmds: [][]any{{"PSUBSCRIBE", "review15:p*"}}, reused: true},
		{name: "WATCH, SUBSCRIBE, messages unread", cmds: [][]any{{"WATCH", watched}, {"SUBSCRIBE", channel}}, after: publish, reused: true},
	}
	nexts := []struct {
		name string
		get  func(*Set) (redis.Conn, error)
	}{
		{"next by Pool", func(s *Set) (redis.Conn, error) { return s.Pool(srv.Addr).GetContext(context.Background()) }},
		{"next by Get", func(s *Set) (redis.Conn, error) { return s.Get(context.Background(), srv.Addr) }},
	}
	for _, tt := range tests {
		for _, next := range nexts {
			t.Run(tt.name+"/"+next.name, func(t *testing.T) {
				set := newTestSet(t, Options{DB: db, ClientName: "fresh", TestOnBorrow: Never, ReadTimeout: 10 * time.Second})
				c, err := set.Pool(srv.Addr).GetContext(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				id, err := redis.Int64(c.Do("CLIENT", "ID"))
				if err != nil {
					t.Fatal(err)
				}
				for _, cmd := range tt.cmds {
					if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
				if tt.after != nil {
					if err := tt.after(c); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Now()
				c.Close()
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("Close took %v: it waited for a reply that may never come", took)
				}
				if _, err := admin.Do("INCR", watched); err != nil {
					t.Fatal(err)
				}

				n, err := next.get(set)
				if err != nil {
					t.Fatal(err)
				}
				defer n.Close()
				if reply, err := redis.String(n.Do("ECHO", "mine")); err != nil || reply != "mine" {
					t.Fatalf("the next caller's ECHO = %q, %v: a reply left over or missing", reply, err)
				}
				nid, err := redis.Int64(n.Do("CLIENT", "ID"))
				if err != nil {
					t.Fatal(err)
				}
				if !tt.reused && nid == id {
					t.Errorf("the next caller got the same connection (CLIENT ID %d) although its last user changed its state", id)
				}
				if tt.reused && tt.name == "GET (stateless)" && nid != id {
					t.Errorf("a connection given back after GET was not reused: CLIENT ID %d, then %d", id, nid)
				}
				info, err := redis.String(n.Do("CLIENT", "INFO"))
				if err != nil {
					t.Fatal(err)
				}
				want := []string{fmt.Sprintf(" db=%d ", db), " name=fresh ", " flags=N ", " sub=0 ", " psub=0 ", " ssub=0 ", " multi=-1 ", " redir=-1 ", " resp=2"}
				for _, w := range want {
					if !strings.Contains(info, w) {
						t.Errorf("the next caller's connection is not fresh: CLIENT INFO %q lacks %q", info, w)
					}
				}
				n.Send("MULTI")
				n.Send("SET", "review15:lender:next", "v")
				replies, err := redis.Values(n.Do("EXEC"))
				if err != nil || fmt.Sprint(replies) != "[OK]" {
					t.Errorf("the next caller's MULTI, SET, EXEC = %v, %v: a key the last caller watched is still watched", replies, err)
				}
			})
		}
	}
}
