package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Every attempt of a command that a Sentinel shard sends again while it
// waits for a new master reaches the Command hook, as in cluster mode, and
// an attempt that is sent again is a retry, not a failure that stands:
// the hook saw only the first attempt, as failed, so an exporter counted a
// failover's retried reads as failed commands, never counted the retries,
// nor the attempt that succeeded at the new master. Run once with a
// failover wait that the failover fits in (the GET succeeds) and once with
// one too short for it (the GET fails after its retries).
func TestSentinelRetriesReachTheCommandHook(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wait    time.Duration
		wantErr bool
	}{
		{"new master in time", 30 * time.Second, false},
		{"no new master in time", 500 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
			rec := &recorder{}
			cfg := sentinelConfig(set)
			cfg.Sentinel.FailoverWait = tc.wait
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
			_, err = c.Do(ctx, "GET", "r3hook")
			if (err != nil) != tc.wantErr {
				t.Fatalf("GET across the failover: %v, want an error: %t", err, tc.wantErr)
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
			last := got.commands[len(got.commands)-1]
			if !tc.wantErr && last.Outcome != shard.OutcomeOK {
				t.Errorf("the last attempt's outcome is %s (%v), want ok", last.Outcome, last.Err)
			}
			for i, ev := range got.commands[:len(got.commands)-1] {
				if ev.Outcome != shard.OutcomeRetry {
					t.Errorf("attempt %d: outcome %s (%v), want retry", i, ev.Outcome, ev.Err)
				}
			}
			if len(got.ops) != 1 || got.ops[0].Outcome.IsError() != tc.wantErr {
				t.Errorf("ops %+v, want one operation, failed: %t", got.ops, tc.wantErr)
			}
		})
	}
}
