package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// In cluster mode a command written after one the server refused with a
// protocol error (it then closes the connection without running what
// followed) was reported as a write of unknown outcome, though the client
// knows it did not run (TestReview7CommandsAfterAProtocolErrorAreNotUnknown
// covers the ring): it is retried like any command that never reached a
// server, and runs.
func TestReview7ClusterRetriesCommandsAfterAProtocolError(t *testing.T) {
	cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := clusterConfig(cl.Seeds()...)
	cfg.Health.Interval = -1 // the resets of rounds cut mid-value would mark the node down
	cfg.DisableAutoPipeline = true
	c := newClient(t, cfg)
	ctx := context.Background()
	big := strings.Repeat("x", 1<<20+1)
	replied := 0
	for i := 0; i < 100 && replied < 2; i++ {
		if _, err := c.Do(ctx, "DEL", "{r7pc}after"); err != nil {
			t.Fatal(err)
		}
		p := c.Pipeline()
		p.Send("SET", "{r7pc}big", big)
		p.Send("SET", "{r7pc}after", "1")
		res, err := p.Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 2 {
			t.Fatalf("%d results, want 2", len(res))
		}
		var re redis.Error
		if !errors.As(res[0].Err, &re) || !strings.Contains(string(re), "Protocol error") {
			continue // the server reset the connection while the value was written
		}
		replied++
		var uo *shard.UnknownOutcomeError
		if errors.As(res[1].Err, &uo) {
			t.Fatalf("the SET after the refused one: %v, reported as of unknown outcome", res[1].Err)
		}
		if res[1].Err != nil {
			t.Fatalf("the SET after the refused one: %v, want it retried and run", res[1].Err)
		}
		v, err := redis.String(c.Do(ctx, "GET", "{r7pc}after"))
		if err != nil || v != "1" {
			t.Fatalf("GET after: %q, %v; want the retried SET's 1", v, err)
		}
	}
	if replied == 0 {
		t.Fatal("the protocol error never came back as a reply in 100 rounds")
	}
}
