package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// While a rollback waits behind its fence, a blind overwrite of a key not
// moved forward yet is written at the forward new owner and then deletes
// the old copy. A delete that waits for a pooled connection to the old
// owner (MaxActive reached, Wait, a caller's context with a deadline)
// for longer than the rollback's switch waits must not be sent once the
// reverse fence is armed: by then the key may have moved back there, and
// the delete would remove it, leaving the key on no node at all.
func TestReview6RollbackOverwriteDeleteWaitingForAConnection(t *testing.T) {
	ctx := context.Background()
	s, c, k, oldOwner, holder := rollbackWaitSetup(t, "r6ow")
	done := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err := c.Do(wctx, "SET", k, "new") // written forward, then the old copy deleted
		done <- err
	}()
	waitFor(t, 10*time.Second, "the old copy's DEL to wait for a connection", func() bool {
		return goroutineIn("redis.(*Pool).waitVacantConn", "dropOld")
	})
	s.fenceAndArm(t, c) // the reverse fence: its switch stops waiting for the overwrite
	// A reverse-armed process writes the key: it moves back to its owner
	// (the old copy there is kept as busy, or the overwrite moves back).
	back := newClient(t, armedConfig(s.to, s.from))
	if _, err := back.Do(ctx, "APPEND", k, "+x"); err != nil {
		t.Fatal(err)
	}
	holder.Close() // the DEL gets its connection
	var waitErr error
	select {
	case waitErr = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting SET never returned")
	}
	var me *shard.MigrateError
	if waitErr != nil && (!errors.As(waitErr, &me) || !me.Sent || !errors.Is(waitErr, shard.ErrFenceSwitched)) {
		t.Errorf("the waiting SET: %v, want success or a *MigrateError with Sent matching ErrFenceSwitched", waitErr)
	}
	got, err := redis.String(back.Do(ctx, "GET", k))
	if err != nil {
		t.Fatalf("GET after the rollback: %v (the SET: %v): the key was lost", err, waitErr)
	}
	if got != "10+x" && got != "new+x" {
		t.Errorf("GET = %q, want 10+x or new+x (the SET: %v)", got, waitErr)
	}
	if h := holders(t, s.servers, k); len(h) != 1 || h[0] != oldOwner {
		t.Errorf("the key sits on %v, want %s alone (its owner once rolled back)", h, oldOwner)
	}
}
