package pool

import (
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestReview15BlockingAfterShardedSubscribeCountsReplies: SSUBSCRIBE and
// SUNSUBSCRIBE of two channels get two replies each, which the
// connection took for the replies of two commands each: the replies it
// took for the MULTI's was a SET's +OK sent before it, while the server
// refused the MULTI (a wrong argument count). The BLPOP sent next was
// taken for one queued in a transaction, but blocked on the server; the
// return read the replies it counted as pending and kept the connection
// idle with the BLPOP blocked, which popped an element pushed meanwhile.
// The connection must be closed instead.
func TestReview15BlockingAfterShardedSubscribeCountsReplies(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	for _, b := range borrowers {
		t.Run(b.name, func(t *testing.T) {
			set := newTestSet(t, Options{ReadTimeout: returnReadTimeout, TestOnBorrow: Never})
			key := "review15:ssubblock:" + b.name
			c, err := b.get(set, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			sendAll(t, c, [][]any{
				{"SSUBSCRIBE", "s1", "s2"}, {"SUNSUBSCRIBE"},
				{"SET", "review15:ssubblock:k", "v"}, {"PING"}, {"MULTI", "x"},
			})
			// As many replies as commands were sent: the SSUBSCRIBE's
			// and SUNSUBSCRIBE's four, and the SET's.
			var last any
			for range 5 {
				if last, err = c.Receive(); err != nil {
					t.Fatal(err)
				}
			}
			if s, _ := redis.String(last, nil); s != "OK" {
				t.Fatalf("the fifth reply = %v, want the SET's OK", last)
			}
			sendAll(t, c, [][]any{{"BLPOP", key, 0}})
			waitClients(t, admin, "blocked_clients", "1", "the BLPOP after the refused MULTI does not block")
			timedCloseAnyErr(t, c)
			checkBlockedConnGone(t, set, admin, srv.Addr, key)
			nextCallerEchoes(t, set, srv.Addr, b.get)
		})
	}
}
