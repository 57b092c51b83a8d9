package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// While a rollback waits behind its fence, the client still moves keys
// forward (as the armed processes around it do). A forward MIGRATE that
// waits for a pooled connection to the key's forward old owner (MaxActive
// reached, Wait, a caller's context with a deadline) for longer than the
// rollback's switch waits must not be sent once the reverse fence is
// armed: it would carry the key forward again after the reverse-armed
// processes found it at its (rollback) owner and remembered it there, and
// their next INCR would start a fresh counter there (a lost value, and
// the key on the wrong node).
func TestReview6RollbackForwardMoveWaitingForAConnection(t *testing.T) {
	ctx := context.Background()
	s, c, k, oldOwner, holder := rollbackWaitSetup(t, "r6rb")
	done := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err := c.Do(wctx, "INCR", k) // moves k forward first
		done <- err
	}()
	waitFor(t, 10*time.Second, "the forward MIGRATE to wait for a connection", func() bool {
		return goroutineIn("redis.(*Pool).waitVacantConn", "sendRounds")
	})
	s.fenceAndArm(t, c) // the reverse fence: its switch stops waiting for the INCR
	// A reverse-armed process finds k at its owner (NOKEY from the
	// forward new owner) and remembers it there.
	back := newClient(t, armedConfig(s.to, s.from))
	if n, err := redis.Int(back.Do(ctx, "INCR", k)); err != nil || n != 11 {
		t.Fatalf("INCR by a reverse-armed process = %d, %v; want 11", n, err)
	}
	holder.Close() // the forward MIGRATE gets its connection
	var waitErr error
	select {
	case waitErr = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting INCR never returned")
	}
	want := 13
	if waitErr != nil {
		if !errors.Is(waitErr, shard.ErrFenceSwitched) {
			t.Fatalf("the waiting INCR: %v, want ErrFenceSwitched or success", waitErr)
		}
		want = 12
	}
	n, err := redis.Int(back.Do(ctx, "INCR", k))
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("INCR by the reverse-armed process = %d, want %d (the waiting INCR: %v)", n, want, waitErr)
	}
	if got := holders(t, s.servers, k); len(got) != 1 || got[0] != oldOwner {
		t.Errorf("the key sits on %v, want %s alone (its owner once rolled back)", got, oldOwner)
	}
}

// rollbackWaitSetup builds the set-up of the review6 rollback tests: a
// client armed forward with two connections per node, a moving key k
// whose old owner (oldOwner) is not the first server and which is not
// moved forward yet, a rollback waiting behind its fence (AbortMigration),
// and holder, a Conn that keeps one of oldOwner's two connections
// (WATCH on a key that stays there), so that the next command to oldOwner
// waits for a connection. prefix names the test's keys.
func rollbackWaitSetup(t *testing.T, prefix string) (s *switchSetup, c *shard.Client, k, oldOwner string, holder redis.Conn) {
	t.Helper()
	ctx := context.Background()
	s = newSwitchSetup(t, 300*time.Millisecond)
	cfg := s.to
	from := s.from
	cfg.Migration = &shard.Migration{From: &from}
	cfg.Pool.DialTimeout, cfg.Pool.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	// Two connections per node: a beacon's and the holder's.
	cfg.Pool.MaxActive, cfg.Pool.Wait = 2, true
	c = newClient(t, cfg)
	s.fenceAndArm(t, c)
	for _, m := range s.moving(t, prefix, 20) {
		if o := ringOwner(t, s.from, m); o != s.servers[0].Addr {
			k, oldOwner = m, o
			break
		}
	}
	if k == "" {
		t.Fatal("no moving key off the first server")
	}
	// A key that stays on k's old owner in both topologies: a Conn
	// watching it holds one of that node's two connections.
	var h string
	for i := 0; h == "" && i < 10000; i++ {
		cand := fmt.Sprintf("%sh:%d", prefix, i)
		if ringOwner(t, s.from, cand) == oldOwner && ringOwner(t, s.to, cand) == oldOwner {
			h = cand
		}
	}
	if h == "" {
		t.Fatal("no staying key on the old owner")
	}
	srv := serversByAddr(s.servers)[oldOwner]
	if _, err := srv.Do("SET", k, "10"); err != nil { // not moved forward yet
		t.Fatal(err)
	}
	if err := c.AbortMigration(ctx); err != nil {
		t.Fatal(err)
	}
	holder = c.Conn()
	t.Cleanup(func() { holder.Close() })
	if _, err := holder.Do("WATCH", h); err != nil {
		t.Fatal(err)
	}
	return s, c, k, oldOwner, holder
}
