package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Every attempt of a command that a Sentinel shard sends again while it
// waits for a new master reaches the Command hook, as in cluster mode: the
// hook saw only the first, failed attempt, so an exporter never counted
// the retries nor the attempt that succeeded at the new master, and a
// span ended on a failure for a command that worked.
func TestSentinelRetriesReachTheCommandHook(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	rec := &recorder{}
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = 30 * time.Second
	cfg.Health.Interval = -1
	cfg.DisableAutoPipeline = true
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)
	ctx := context.Background()
	if _, err := c.Do(ctx, "SET", "r3hook", "v"); err != nil {
		t.Fatal(err)
	}
	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := master.Kill(); err != nil {
		t.Fatal(err)
	}
	rec.reset()
	var before int64
	for _, n := range c.Stats().Nodes {
		before += n.Retries
	}
	if _, err := c.Do(ctx, "GET", "r3hook"); err != nil {
		t.Fatalf("GET across the failover: %v", err)
	}
	var retries int64
	for _, n := range c.Stats().Nodes {
		retries += n.Retries
	}
	retries -= before
	got := rec.snapshot()
	if retries < 1 {
		t.Fatalf("the GET was not sent again (retries %d): the test did not cross a failover", retries)
	}
	if int64(len(got.commands)) != retries+1 {
		t.Fatalf("the Command hook saw %d attempts, the client made %d", len(got.commands), retries+1)
	}
	if last := got.commands[len(got.commands)-1]; last.Outcome != shard.OutcomeOK {
		t.Errorf("the last attempt's outcome is %s (%v), want ok", last.Outcome, last.Err)
	}
	for i, ev := range got.commands[:len(got.commands)-1] {
		if ev.Outcome != shard.OutcomeRetry {
			t.Errorf("attempt %d: outcome %s (%v), want retry", i, ev.Outcome, ev.Err)
		}
	}
	if len(got.ops) != 1 || got.ops[0].Outcome != shard.OutcomeOK {
		t.Errorf("ops %+v, want one successful operation", got.ops)
	}
}
