package pool

import (
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestQuitConnIsNotHandedOn: after QUIT the server closes the connection
// once it has sent the reply, so the close may not have arrived when the
// connection is borrowed again at once. Handed on, the next caller's
// command goes to a connection the server ignores and is about to close:
// it fails (EOF, reset) for no fault of the node. Every borrow after a
// QUIT must get a connection that answers.
func TestQuitConnIsNotHandedOn(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{TestOnBorrow: Never})
	const rounds = 200
	failed, firstErr := nextBorrowFailures(t, set, srv.Addr, rounds, func(c redis.Conn, _ int) {
		if reply, err := c.Do("QUIT"); err != nil || reply != "OK" {
			t.Fatalf("QUIT = %v, %v", reply, err)
		}
	}, "SET", "k", "v")
	if failed > 0 {
		t.Errorf("%d of %d commands borrowed right after a QUIT failed, the first with: %v", failed, rounds, firstErr)
	}
	if st := set.Stats()[srv.Addr]; st.Dials < rounds {
		t.Errorf("%d dials for %d QUITs: a connection that sent QUIT was handed on", st.Dials, rounds)
	}
}
