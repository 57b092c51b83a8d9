package pool

import (
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// waitClients waits until the server's INFO clients field is want, and
// fails the test after 30 s.
func waitClients(t *testing.T, admin redis.Conn, field, want, why string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for clientsField(t, admin, field) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s %s after 30 s, want %s: %s", field, clientsField(t, admin, field), want, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReview14BlockingAfterRefusedMultiIsNotDrained: a BLPOP sent after
// a MULTI that the server refused (its ACL user may not run MULTI) is not
// queued but blocks at once. The connection took it for one queued in a
// transaction, so the pool's return sent DISCARD and read every pending
// reply: Close waited for the BLPOP until ReadTimeout, and an element
// pushed meanwhile was popped by the BLPOP and thrown away by the drain.
// Whether the MULTI's refusal was read or not (the reply unread, nothing
// tells whether the BLPOP is queued), Close must return at once, the
// server must forget the BLPOP, and a push afterwards must stay in the
// list.
func TestReview14BlockingAfterRefusedMultiIsNotDrained(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	if _, err := admin.Do("ACL", "SETUSER", "nomulti", "on", ">nomultipw", "~*", "&*", "+@all", "-multi"); err != nil {
		t.Fatal(err)
	}
	for _, b := range borrowers {
		for _, multiRead := range []bool{true, false} {
			name := b.name + "/MULTI refusal read"
			if !multiRead {
				name = b.name + "/MULTI refusal unread"
			}
			t.Run(name, func(t *testing.T) {
				set := newTestSet(t, Options{
					Username: "nomulti", Password: "nomultipw",
					ReadTimeout: returnReadTimeout, TestOnBorrow: Never,
				})
				key := "review14:refusedmulti:" + name
				c, err := b.get(set, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				if multiRead {
					if _, err := c.Do("MULTI"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
						t.Fatalf("MULTI = %v, want the server's NOPERM refusal", err)
					}
				} else if err := c.Send("MULTI"); err != nil {
					t.Fatal(err)
				}
				if err := c.Send("BLPOP", key, 0); err != nil {
					t.Fatal(err)
				}
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
				// The MULTI was refused: the BLPOP blocks on the server.
				waitClients(t, admin, "blocked_clients", "1", "the BLPOP after the refused MULTI does not block")

				pushed := false
				closed := make(chan error, 1)
				start := time.Now()
				go func() { closed <- c.Close() }()
				select {
				case err := <-closed:
					if err != nil {
						t.Errorf("Close = %v, want nil", err)
					}
				case <-time.After(quickClose):
					// Close drains the connection: an element pushed
					// now is popped by the BLPOP and read by the drain.
					if _, err := admin.Do("LPUSH", key, "pushed"); err != nil {
						t.Fatal(err)
					}
					pushed = true
					<-closed
					t.Errorf("Close took %v (ReadTimeout %v): it waited for the reply of a BLPOP that the refused MULTI left blocking", time.Since(start), returnReadTimeout)
				}

				// Once the server forgot the closed connection's BLPOP,
				// an element pushed stays in the list.
				waitClients(t, admin, "blocked_clients", "0", "the BLPOP of the connection given back still blocks")
				if !pushed {
					if _, err := admin.Do("LPUSH", key, "pushed"); err != nil {
						t.Fatal(err)
					}
				}
				if n, err := redis.Int(admin.Do("LLEN", key)); err != nil || n != 1 {
					t.Errorf("LLEN %s = %d, %v, want 1: the element pushed was popped by the BLPOP and thrown away by the drain", key, n, err)
				}

				nextCallerEchoes(t, set, srv.Addr, b.get)
			})
		}
	}
}

// TestReview14BlockingInsideMultiKeptOnlyWhenQueued: a blocking command
// sent inside MULTI is drained on return, and its connection kept, only
// when the server is known to have queued it: the MULTI's +OK was read
// (before or after the BLPOP was sent), a nested MULTI's refusal leaving
// the first one open. With the MULTI's reply unread nothing tells, and
// after a RESET (which ends the transaction at once) the BLPOP blocks:
// the connection is closed at once instead of drained.
func TestReview14BlockingInsideMultiKeptOnlyWhenQueued(t *testing.T) {
	srv := plainServer(t)
	type step struct {
		op   string // "do", "send" or "receive"
		args []any
	}
	blpop := step{"send", []any{"BLPOP", "review14:inmulti", 0}}
	tests := []struct {
		name  string
		steps []step
		dials int64 // 1: the connection was kept
	}{
		{"MULTI read", []step{{"do", []any{"MULTI"}}, blpop}, 1},
		{"MULTI read after BLPOP sent", []step{{"send", []any{"MULTI"}}, blpop, {"receive", nil}}, 1},
		{"nested MULTI", []step{{"do", []any{"MULTI"}}, {"do", []any{"MULTI"}}, blpop}, 1},
		{"MULTI unread", []step{{"send", []any{"MULTI"}}, blpop}, 2},
		{"RESET inside MULTI", []step{{"do", []any{"MULTI"}}, {"send", []any{"RESET"}}, blpop}, 2},
		{"after EXEC", []step{{"do", []any{"MULTI"}}, {"do", []any{"EXEC"}}, blpop}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{ReadTimeout: returnReadTimeout, TestOnBorrow: Never})
			c, err := borrowers[0].get(set, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.steps {
				switch s.op {
				case "do":
					// A nested MULTI's refusal is expected.
					if _, err := c.Do(s.args[0].(string), s.args[1:]...); err != nil && !strings.Contains(err.Error(), "nested") {
						t.Fatalf("%v: %v", s.args, err)
					}
				case "send":
					if err := c.Send(s.args[0].(string), s.args[1:]...); err != nil {
						t.Fatal(err)
					}
				case "receive":
					if err := c.Flush(); err != nil {
						t.Fatal(err)
					}
					if r, err := c.Receive(); err != nil || r != "OK" {
						t.Fatalf("MULTI's reply = %v, %v", r, err)
					}
				}
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			timedClose(t, c)
			nextCallerEchoes(t, set, srv.Addr, borrowers[0].get)
			if d := set.Stats()[srv.Addr].Dials; d != tt.dials {
				t.Errorf("%d dials, want %d (1: the connection was kept)", d, tt.dials)
			}
		})
	}
}
