package dialedaddr_test

import (
	"context"
	"testing"

	"github.com/shardis/shardis/internal/dialedaddr"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
)

// A connection of package pool, as its Set lends it (inside the redigo
// pool's wrapper), tells the address it was dialed to without an
// allocation, and is left usable; a closed one tells nothing.
func TestReview15PoolConnectionTellsItsDialedAddress(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	set, err := pool.NewSet(pool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	conn, err := set.Get(context.Background(), s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if got := dialedaddr.Of(conn); got != s.Addr {
		t.Fatalf("Of = %q, want %q", got, s.Addr)
	}
	if n := testing.AllocsPerRun(100, func() { dialedaddr.Of(conn) }); n != 0 {
		t.Errorf("Of allocates %v times, want 0", n)
	}
	if r, err := conn.Do("PING"); err != nil || r != "PONG" {
		t.Fatalf("PING after Of = %v, %v; want PONG", r, err)
	}
	conn.Close()
	if got := dialedaddr.Of(conn); got != "" {
		t.Errorf("Of of a closed connection = %q, want empty", got)
	}
}
