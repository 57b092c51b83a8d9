package pool

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestClientKillOfItselfIsNotHandedOn: CLIENT KILL whose filter matches
// the connection that sends it (SKIPME no, or the old form naming its
// own address) makes the
// server close that connection after the reply, a close that may not
// have arrived when the connection is borrowed again at once. Handed on,
// the next caller's command went to a connection the server ignores and
// failed with a reset for no fault of the node.
func TestClientKillOfItselfIsNotHandedOn(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{TestOnBorrow: Never})
	const rounds = 200
	failed, firstErr := nextBorrowFailures(t, set, srv.Addr, rounds, func(c redis.Conn, i int) {
		info, err := redis.String(c.Do("CLIENT", "INFO"))
		if err != nil {
			t.Fatal(err)
		}
		var id, addr string
		for _, f := range strings.Fields(info) {
			if v, ok := strings.CutPrefix(f, "id="); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(f, "addr="); ok {
				addr = v
			}
		}
		if i%2 == 0 {
			if n, err := redis.Int(c.Do("CLIENT", "KILL", "ID", id, "SKIPME", "no")); err != nil || n != 1 {
				t.Fatalf("CLIENT KILL ID %s SKIPME no = %v, %v, want 1", id, n, err)
			}
		} else if reply, err := c.Do("CLIENT", "KILL", addr); err != nil || reply != "OK" {
			t.Fatalf("CLIENT KILL %s = %v, %v, want OK", addr, reply, err)
		}
	}, "SET", "k", "v")
	if failed > 0 {
		t.Errorf("%d of %d commands borrowed right after the connection killed itself failed, the first with: %v", failed, rounds, firstErr)
	}
}
