package pool

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// TestReview11ReturnRenameOnHungServerIsQuick: a connection borrowed
// while SetClientName changed the name is renamed when it is given back.
// The rename waited for its reply up to ReadTimeout: with the server hung
// (paused), the caller's Close took the whole ReadTimeout (20 s here).
// Close must return quickly; the connection that could not be renamed is
// not kept under the old name: the next caller gets one that carries the
// new name, and no connection of the old name is left on the server.
func TestReview11ReturnRenameOnHungServerIsQuick(t *testing.T) {
	for _, b := range borrowers {
		t.Run(b.name, func(t *testing.T) {
			rs := redistest.StartTB(t, redistest.Options{})
			t.Cleanup(func() { _ = rs.Resume() }) // before the server's own cleanup stops it
			srv := &testServer{Addr: rs.Addr}
			set := newTestSet(t, Options{ClientName: "review11-a", ReadTimeout: returnReadTimeout})
			c, err := b.get(set, rs.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do("PING"); err != nil {
				t.Fatal(err)
			}
			// Nothing is idle: SetClientName only changes the name, and
			// the borrowed connection is renamed when it comes back.
			if err := set.SetClientName(context.Background(), "review11-b"); err != nil {
				t.Fatal(err)
			}
			if err := rs.Pause(); err != nil {
				t.Fatal(err)
			}
			timedClose(t, c)
			if err := rs.Resume(); err != nil {
				t.Fatal(err)
			}

			c, err = b.get(set, rs.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if name, err := redis.String(c.Do("CLIENT", "GETNAME")); err != nil || name != "review11-b" {
				t.Errorf("the next caller's connection is named %q, %v; want review11-b", name, err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				got := serverNames(t, srv)
				if got["review11-a"] == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("CLIENT LIST names %v 30 s after the return: a connection kept the old name", got)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestReview11ReturnRenameKeepsTheConnection: on a server that answers,
// the rename on return keeps the connection (no dial for the next
// caller), renamed.
func TestReview11ReturnRenameKeepsTheConnection(t *testing.T) {
	srv := plainServer(t)
	for _, b := range borrowers {
		t.Run(b.name, func(t *testing.T) {
			set := newTestSet(t, Options{ClientName: "review11-c", ReadTimeout: returnReadTimeout})
			c, err := b.get(set, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if err := set.SetClientName(context.Background(), "review11-d"); err != nil {
				t.Fatal(err)
			}
			timedClose(t, c)
			if got := serverNames(t, srv); got["review11-c"] != 0 || got["review11-d"] != 1 {
				t.Errorf("after the return: CLIENT LIST names %v, want one review11-d", got)
			}
			c, err = b.get(set, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if name, err := redis.String(c.Do("CLIENT", "GETNAME")); err != nil || name != "review11-d" {
				t.Errorf("the next caller's connection is named %q, %v; want review11-d", name, err)
			}
			if d := set.Stats()[srv.Addr].Dials; d != 1 {
				t.Errorf("%d dials, want 1: the renamed connection is kept", d)
			}
		})
	}
}

// TestReview11CallersOwnDoEmptyDoesNotRename: a caller's own Do("")
// with no reply pending (a flush with nothing queued) took the rename
// meant for the pool's return: it sent CLIENT SETNAME on the borrowed
// connection, and on a server that did not answer in time (paused here)
// it closed the caller's connection under it, after waiting for the
// reply; the caller's next command failed. Only the pool's return
// renames: Do("") answers at once and leaves the connection as it is.
func TestReview11CallersOwnDoEmptyDoesNotRename(t *testing.T) {
	for _, b := range borrowers {
		t.Run(b.name, func(t *testing.T) {
			rs := redistest.StartTB(t, redistest.Options{})
			t.Cleanup(func() { _ = rs.Resume() })
			set := newTestSet(t, Options{ClientName: "review11-e", ReadTimeout: returnReadTimeout})
			c, err := b.get(set, rs.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Do("PING"); err != nil {
				t.Fatal(err)
			}
			if err := set.SetClientName(context.Background(), "review11-f"); err != nil {
				t.Fatal(err)
			}
			if err := rs.Pause(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			reply, err := c.Do("")
			if took := time.Since(start); took > quickClose {
				t.Errorf("Do(\"\") with nothing pending took %v on a paused server", took)
			}
			if reply != nil || err != nil {
				t.Errorf("Do(\"\") = %v, %v; want nil, nil", reply, err)
			}
			if err := c.Err(); err != nil {
				t.Errorf("the caller's connection failed after its own Do(\"\"): %v", err)
			}
			if err := rs.Resume(); err != nil {
				t.Fatal(err)
			}
			if name, err := redis.String(c.Do("CLIENT", "GETNAME")); err != nil || name != "review11-e" {
				t.Errorf("while borrowed the connection is named %q, %v; want review11-e", name, err)
			}
			timedClose(t, c)
			c, err = b.get(set, rs.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if name, err := redis.String(c.Do("CLIENT", "GETNAME")); err != nil || name != "review11-f" {
				t.Errorf("the next caller's connection is named %q, %v; want review11-f", name, err)
			}
		})
	}
}
