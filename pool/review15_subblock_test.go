package pool

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// sendAll sends cmds on c and flushes them.
func sendAll(t *testing.T, c redis.Conn, cmds [][]any) {
	t.Helper()
	for _, cmd := range cmds {
		if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
}

// checkBlockedConnGone fails the test unless the connection given back
// with a BLPOP blocked on key is gone: not kept among the Set's idle
// connections, closed on the server, and no element pushed afterwards
// taken by the BLPOP.
func checkBlockedConnGone(t *testing.T, set *Set, admin redis.Conn, addr, key string) {
	t.Helper()
	if st := set.Stats()[addr]; st.Idle != 0 {
		t.Fatalf("the connection given back with a BLPOP blocked on the server was kept: Stats %+v", st)
	}
	waitClients(t, admin, "connected_clients", "1", "the connection given back with a BLPOP is still open on the server")
	if _, err := admin.Do("RPUSH", key, "kept"); err != nil {
		t.Fatal(err)
	}
	if n, err := redis.Int(admin.Do("LLEN", key)); err != nil || n != 1 {
		t.Errorf("LLEN %s = %d, %v after a push: the abandoned BLPOP took the element", key, n, err)
	}
}

// TestReview15BlockingAfterUnsubscribeIsNotDrained: a caller subscribes,
// unsubscribes (the server takes any command again) and sends BLPOP,
// which blocks, then gives the connection back. redigo's return, which
// still counts the connection as subscribed, sends UNSUBSCRIBE,
// PUNSUBSCRIBE and ECHO and reads up to the ECHO's reply, which the
// server sends only once the BLPOP is answered: Close waited up to
// ReadTimeout, and an element pushed meanwhile was popped by the BLPOP
// and thrown away. Close must return at once, and the server must
// forget the BLPOP.
func TestReview15BlockingAfterUnsubscribeIsNotDrained(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	const channel = "review15:subblock:ch"
	tests := []struct {
		name string
		run  func(t *testing.T, c redis.Conn, key string)
	}{
		{"replies read", func(t *testing.T, c redis.Conn, key string) {
			if _, err := c.Do("SUBSCRIBE", channel); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do("UNSUBSCRIBE", channel); err != nil {
				t.Fatal(err)
			}
			sendAll(t, c, [][]any{{"BLPOP", key, 0}})
		}},
		{"pipelined, 2 channels", func(t *testing.T, c redis.Conn, key string) {
			sendAll(t, c, [][]any{{"SUBSCRIBE", channel, channel + "2"}, {"UNSUBSCRIBE"}, {"BLPOP", key, 0}})
		}},
		{"pipelined, refused MULTI", func(t *testing.T, c redis.Conn, key string) {
			sendAll(t, c, [][]any{{"SUBSCRIBE", channel, channel + "2"}, {"UNSUBSCRIBE"}, {"MULTI", "x"}, {"BLPOP", key, 0}})
		}},
	}
	for _, tt := range tests {
		for _, b := range borrowers {
			name := b.name + "/" + tt.name
			t.Run(name, func(t *testing.T) {
				set := newTestSet(t, Options{ReadTimeout: returnReadTimeout, TestOnBorrow: Never})
				key := "review15:subblock:" + name
				c, err := b.get(set, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				tt.run(t, c, key)
				waitClients(t, admin, "blocked_clients", "1", "the BLPOP does not block")
				timedCloseAnyErr(t, c)
				checkBlockedConnGone(t, set, admin, srv.Addr, key)
				nextCallerEchoes(t, set, srv.Addr, b.get)
			})
		}
	}
}

// timedCloseAnyErr is timedClose for a connection whose return may
// report that it closed the connection instead of reading its replies.
func timedCloseAnyErr(t *testing.T, c redis.Conn) {
	t.Helper()
	start := time.Now()
	c.Close()
	if took := time.Since(start); took > quickClose {
		t.Errorf("Close took %v (ReadTimeout %v): it waited for a reply that may never come", took, returnReadTimeout)
	}
}
