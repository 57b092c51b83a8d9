package pool

import (
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReview15SubscribedReturnHandsOnNoReplies: a caller WATCHes a key,
// subscribes, and gives the connection back with messages delivered to
// it and unread. The return sends UNWATCH, which the server refuses on a
// subscribed connection, and redigo's drain of the subscription stops at
// that error; the messages (and the replies of an UNSUBSCRIBE of several
// channels) were counted as replies, so fewer replies than are coming
// were read, and under Set.Pool the Set's own return
// then takes the leftovers for its own: the replies of its UNSUBSCRIBE,
// PUNSUBSCRIBE and ECHO came later, and reached the next caller as the
// replies of its own commands. The next caller must get its own ECHO
// back, and its MULTI ... EXEC must run although another client changed
// the key watched.
func TestReview15SubscribedReturnHandsOnNoReplies(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	const key, channel = "review15:subwatch", "review15:subwatch:ch"
	const rounds = 30 // the leftovers reach the next caller only if they arrive after its borrow check
	tests := []struct {
		channels []any
		read     bool // the caller reads the replies of its SUBSCRIBE
		msgs     int
	}{
		{[]any{channel}, true, 0},
		{[]any{channel}, true, 1},
		{[]any{channel}, true, 3},
		{[]any{channel}, true, 6},
		{[]any{channel, channel + "2"}, true, 0},
		{[]any{channel, channel + "2"}, false, 0},
		{[]any{channel, channel + "2"}, false, 2},
	}
	for _, tt := range tests {
		for _, b := range borrowers {
			name := fmt.Sprintf("%s/%d channels, %d messages", b.name, len(tt.channels), tt.msgs)
			if !tt.read {
				name += ", SUBSCRIBE unread"
			}
			t.Run(name, func(t *testing.T) {
				set := newTestSet(t, Options{TestOnBorrow: Never})
				for round := range rounds {
					c, err := b.get(set, srv.Addr)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := c.Do("WATCH", key); err != nil {
						t.Fatal(err)
					}
					if err := c.Send("SUBSCRIBE", tt.channels...); err != nil {
						t.Fatal(err)
					}
					if err := c.Flush(); err != nil {
						t.Fatal(err)
					}
					for range tt.channels {
						if !tt.read {
							break
						}
						if _, err := c.Receive(); err != nil {
							t.Fatal(err)
						}
					}
					if !tt.read {
						waitSubscribers(t, admin, channel)
					}
					for range tt.msgs {
						if _, err := admin.Do("PUBLISH", channel, "m"); err != nil {
							t.Fatal(err)
						}
					}
					c.Close()
					if _, err := admin.Do("INCR", key); err != nil {
						t.Fatal(err)
					}

					next, err := b.get(set, srv.Addr)
					if err != nil {
						t.Fatal(err)
					}
					r, err := next.Do("ECHO", "next")
					if s, _ := redis.String(r, err); err != nil || s != "next" {
						next.Close()
						t.Fatalf("round %d: the next caller's ECHO = %q, %v: it got a reply left on the connection given back", round, r, err)
					}
					next.Send("MULTI")
					next.Send("SET", "review15:subwatch:next", "v")
					replies, err := redis.Values(next.Do("EXEC"))
					next.Close()
					if err != nil || fmt.Sprint(replies) != "[OK]" {
						t.Fatalf("round %d: the next caller's MULTI, SET, EXEC = %v, %v: the key the previous caller watched is still watched", round, replies, err)
					}
				}
			})
		}
	}
}

// waitSubscribers waits until channel has a subscriber.
func waitSubscribers(t *testing.T, admin redis.Conn, channel string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := redis.Values(admin.Do("PUBSUB", "NUMSUB", channel))
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := redis.Int(r[1], nil); n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no subscriber after 30 s", channel)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
