package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
)

// A blocking command at its old owner that a migration's switch cuts off
// fails with ErrFenceSwitched. The caller's own context did not end, so
// the error does not match context.Canceled (a caller that reads
// Canceled as "I gave up" must not drop the command) and its text does
// not say "context canceled"; errors.As still finds the *NodeError of
// the old owner it was cut off at.
func TestReview12FenceCutErrorDoesNotSayCanceled(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 2*time.Second)
	c := newClient(t, s.from)
	k := s.moving(t, "review12:queue", 1)[0]
	oldOwner := ringOwner(t, s.from, k)
	done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[oldOwner], "the BLPOP to block at the old owner")
	if err := c.StartMigration(ctx, s.to); err != nil {
		t.Fatal(err)
	}
	s.fenceAndArm(t, c)
	var err error
	select {
	case r := <-done:
		err = r.err
	case <-time.After(20 * time.Second):
		t.Fatal("the BLPOP is still blocked at the old owner")
	}
	if err == nil {
		t.Fatal("the BLPOP was not cut off")
	}
	msg := err.Error()
	t.Logf("%s", msg)
	checkPrefixOnce(t, msg)
	if !errors.Is(err, shard.ErrFenceSwitched) || !errors.Is(err, shard.ErrMigration) {
		t.Errorf("%q does not match ErrFenceSwitched and ErrMigration", msg)
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("%q matches context.Canceled, though the caller's context did not end", msg)
	}
	if strings.Contains(msg, "context canceled") {
		t.Errorf("%q says \"context canceled\", though the caller's context did not end", msg)
	}
	if n := strings.Count(msg, "(it may have run)"); n != 1 {
		t.Errorf("%q says \"(it may have run)\" %d times, want once", msg, n)
	}
	var ne *shard.NodeError
	if !errors.As(err, &ne) {
		t.Fatalf("errors.As finds no *shard.NodeError in %q", msg)
	}
	if ne.Node.Addr != oldOwner {
		t.Errorf("the *shard.NodeError names %s, want the old owner %s", ne.Node.Addr, oldOwner)
	}
	if !strings.Contains(msg, "cut off by the switch while running at the old owner (it may have run): node ") {
		t.Errorf("%q does not say where it was cut off", msg)
	}
}
