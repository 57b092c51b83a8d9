package pool

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// quickClose bounds a Close that must not wait for a reply: far below
// the Set's ReadTimeout (returnReadTimeout), far above a loaded
// machine's scheduling delays.
const (
	quickClose        = 3 * time.Second
	returnReadTimeout = 20 * time.Second
)

// borrowers are the two ways to borrow a Set's connection: Get, and the
// redigo pool that Pool returns (whose Close gives the connection back
// through a second redigo activeConn).
var borrowers = []struct {
	name string
	get  func(*Set, string) (redis.Conn, error)
}{
	{"Get", func(s *Set, addr string) (redis.Conn, error) { return s.Get(context.Background(), addr) }},
	{"Pool", func(s *Set, addr string) (redis.Conn, error) { return s.Pool(addr).GetContext(context.Background()) }},
}

// timedClose closes c and fails the test if that took longer than
// quickClose.
func timedClose(t *testing.T, c redis.Conn) {
	t.Helper()
	start := time.Now()
	err := c.Close()
	if took := time.Since(start); took > quickClose {
		t.Errorf("Close took %v (ReadTimeout %v): it waited for a reply that may never come", took, returnReadTimeout)
	}
	if err != nil {
		t.Errorf("Close = %v, want nil", err)
	}
}

// nextCallerEchoes borrows a connection to addr with get, as the caller
// after a connection given back does, and fails the test unless it
// answers that caller's own command: a reply left pending on the
// connection given back (a BLPOP's, say) would answer it instead, or
// the read would wait for one that never comes.
func nextCallerEchoes(t *testing.T, set *Set, addr string, get func(*Set, string) (redis.Conn, error)) {
	t.Helper()
	c, err := get(set, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if reply, err := redis.String(c.Do("ECHO", "next")); err != nil || reply != "next" {
		t.Errorf("the next caller's ECHO = %q, %v", reply, err)
	}
}

// clientsField returns a field of the server's INFO clients
// (connected_clients, blocked_clients).
func clientsField(t *testing.T, admin redis.Conn, field string) string {
	t.Helper()
	info, err := redis.String(admin.Do("INFO", "clients"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO clients has no %s: %q", field, info)
	return ""
}

// TestReview10ReturnWithBlockedReplyIsQuick: a connection given back
// with the reply of a blocking command unread (BLPOP ... 0 sent, the
// caller gave up) was drained by the pool's Close, which waited for the
// reply until ReadTimeout passed, and meanwhile took whatever the BLPOP
// popped: an element pushed in that time was lost. Close must return at
// once, closing the connection (the server then forgets the BLPOP), and
// the next caller must get a connection that answers its own commands.
func TestReview10ReturnWithBlockedReplyIsQuick(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	for _, b := range borrowers {
		for _, flushed := range []bool{true, false} {
			name := b.name + "/unflushed"
			if flushed {
				name = b.name + "/flushed"
			}
			t.Run(name, func(t *testing.T) {
				set := newTestSet(t, Options{ReadTimeout: returnReadTimeout, TestOnBorrow: Never})
				key := "review10:blocked:" + name
				c, err := b.get(set, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Do("SET", "review10:before", "x"); err != nil {
					t.Fatal(err)
				}
				if err := c.Send("BLPOP", key, 0); err != nil {
					t.Fatal(err)
				}
				if flushed {
					if err := c.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				timedClose(t, c)

				// The server forgets the BLPOP once it sees the close
				// (it reads what was sent before the close first): an
				// element pushed after that stays in the list.
				deadline := time.Now().Add(30 * time.Second)
				for clientsField(t, admin, "connected_clients") != "1" {
					if time.Now().After(deadline) {
						t.Fatal("the connection given back with a BLPOP is still open on the server after 30 s")
					}
					time.Sleep(20 * time.Millisecond)
				}
				if _, err := admin.Do("RPUSH", key, "kept"); err != nil {
					t.Fatal(err)
				}
				if n, err := redis.Int(admin.Do("LLEN", key)); err != nil || n != 1 {
					t.Errorf("LLEN %s = %d, %v after a push: the abandoned BLPOP took the element", key, n, err)
				}

				nextCallerEchoes(t, set, srv.Addr, b.get)
			})
		}
	}
}

// TestReview10DoEmptyStillReadsBlockedReply: a caller's own Do("") reads
// the reply of a blocking command it sent, as redigo's does: only the
// pool's return gives up on it.
func TestReview10DoEmptyStillReadsBlockedReply(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	for _, b := range borrowers {
		t.Run(b.name, func(t *testing.T) {
			set := newTestSet(t, Options{ReadTimeout: returnReadTimeout})
			key := "review10:doempty:" + b.name
			c, err := b.get(set, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Send("BLPOP", key, 0); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for clientsField(t, admin, "blocked_clients") != "1" {
				if time.Now().After(deadline) {
					t.Fatal("the BLPOP does not block on the server")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := admin.Do("RPUSH", key, "v"); err != nil {
				t.Fatal(err)
			}
			replies, err := redis.Values(c.Do(""))
			if err != nil || len(replies) != 1 {
				t.Fatalf("Do(\"\") = %v, %v, want the BLPOP's reply", replies, err)
			}
			kv, err := redis.Strings(replies[0], nil)
			if err != nil || len(kv) != 2 || kv[1] != "v" {
				t.Errorf("BLPOP's reply = %q, %v, want [%s v]", kv, err, key)
			}
		})
	}
}

// TestReview10ReturnWithSilencedRepliesIsQuick: a caller that silenced
// the replies itself (CLIENT REPLY OFF or SKIP, sent and not undone) and
// gave the connection back made the pool's Close wait ReadTimeout for
// replies that never come. Close must return at once; the commands
// sent still run (as the pool's Close sends what was queued), and the
// next caller gets a connection that answers.
func TestReview10ReturnWithSilencedRepliesIsQuick(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	for _, b := range borrowers {
		for _, mode := range []string{"OFF", "SKIP"} {
			t.Run(b.name+"/"+mode, func(t *testing.T) {
				set := newTestSet(t, Options{ReadTimeout: returnReadTimeout, TestOnBorrow: Never})
				key := "review10:silenced:" + b.name + ":" + mode
				c, err := b.get(set, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Send("CLIENT", "REPLY", mode); err != nil {
					t.Fatal(err)
				}
				if err := c.Send("SET", key, "ran"); err != nil {
					t.Fatal(err)
				}
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
				timedClose(t, c)

				deadline := time.Now().Add(30 * time.Second)
				for {
					v, err := redis.String(admin.Do("GET", key))
					if err == nil && v == "ran" {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("GET %s = %q, %v: the SET sent before Close did not run", key, v, err)
					}
					time.Sleep(20 * time.Millisecond)
				}

				nextCallerEchoes(t, set, srv.Addr, b.get)
			})
		}
	}
}

// TestReview10ReturnWithOtherBlockingRepliesIsQuick: the other commands
// that block on the server (XREAD with BLOCK, WAIT for a replica that
// does not exist, a blocking command sent after others) are given up on
// as BLPOP is; XREAD without BLOCK, and a BLPOP queued inside MULTI
// (whose +OK was read: the server accepted the MULTI), do not block, and
// their connection is kept.
func TestReview10ReturnWithOtherBlockingRepliesIsQuick(t *testing.T) {
	srv := plainServer(t)
	tests := []struct {
		name  string
		cmds  [][]any
		done  int  // how many of cmds, first, are run by Do
		kept  bool // the connection goes back to the pool
		dials int64
	}{
		{"XREAD BLOCK", [][]any{{"XREAD", "BLOCK", 0, "STREAMS", "review10:s", "$"}}, 0, false, 2},
		{"WAIT", [][]any{{"WAIT", 1, 0}}, 0, false, 2},
		{"BLPOP after GETs", [][]any{{"GET", "a"}, {"GET", "b"}, {"BLPOP", "review10:l", 0}, {"GET", "c"}}, 0, false, 2},
		{"XREAD without BLOCK", [][]any{{"XREAD", "STREAMS", "review10:s", "0"}}, 0, true, 1},
		{"BLPOP inside MULTI", [][]any{{"MULTI"}, {"BLPOP", "review10:l", 0}, {"EXEC"}}, 1, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{ReadTimeout: returnReadTimeout, TestOnBorrow: Never})
			c, err := set.Get(context.Background(), srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			for i, cmd := range tt.cmds {
				if i < tt.done {
					if _, err := c.Do(cmd[0].(string), cmd[1:]...); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			timedClose(t, c)
			nextCallerEchoes(t, set, srv.Addr, borrowers[0].get)
			if d := set.Stats()[srv.Addr].Dials; d != tt.dials {
				t.Errorf("%d dials, want %d (connection kept: %v)", d, tt.dials, tt.kept)
			}
		})
	}
}
