package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	s := newSwitchSetup(t, 300*time.Millisecond)
	cfg := s.to
	from := s.from
	cfg.Migration = &shard.Migration{From: &from}
	cfg.Pool.DialTimeout, cfg.Pool.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	// Two connections per node: a beacon's and the holder's.
	cfg.Pool.MaxActive, cfg.Pool.Wait = 2, true
	c := newClient(t, cfg)
	s.fenceAndArm(t, c)
	var k, oldOwner string
	for _, m := range s.moving(t, "r6ow", 20) {
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
		cand := fmt.Sprintf("r6owh:%d", i)
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
	holder := c.Conn()
	defer holder.Close()
	if _, err := holder.Do("WATCH", h); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err := c.Do(wctx, "SET", k, "new") // written forward, then the old copy deleted
		done <- err
	}()
	waitFor(t, 10*time.Second, "the old copy's DEL to wait for a connection", func() bool {
		for _, g := range stacks() {
			if strings.Contains(g, "redis.(*Pool).waitVacantConn") && strings.Contains(g, "dropOld") {
				return true
			}
		}
		return false
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
