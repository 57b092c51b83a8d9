package pool

import (
	"context"
	"testing"
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
	ctx := context.Background()
	const rounds = 200
	failed := 0
	var firstErr error
	for range rounds {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if reply, err := c.Do("QUIT"); err != nil || reply != "OK" {
			t.Fatalf("QUIT = %v, %v", reply, err)
		}
		c.Close()

		c, err = set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do("SET", "k", "v"); err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
		}
		c.Close()
	}
	if failed > 0 {
		t.Errorf("%d of %d commands borrowed right after a QUIT failed, the first with: %v", failed, rounds, firstErr)
	}
	if st := set.Stats()[srv.Addr]; st.Dials < rounds {
		t.Errorf("%d dials for %d QUITs: a connection that sent QUIT was handed on", st.Dials, rounds)
	}
}
