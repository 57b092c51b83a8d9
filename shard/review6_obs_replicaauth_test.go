package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// TestReview6SentinelReplicaRefusalIsARetryInTheHooks: a Sentinel
// shard's replica that refuses the client's credentials does not end the
// read: the client sends it to the master at once (docs/sentinel.md). The
// Command hook must say so: the replica's attempt is a retry, not a
// server_error, which OutcomeServerError documents as an error reply that
// stands. Before, the refusal, which carries the server's error reply,
// was classified as the command's own error reply, so metrics counted a
// failed read the caller never saw.
func TestReview6SentinelReplicaRefusalIsARetryInTheHooks(t *testing.T) {
	rec := &recorder{}
	c, replica := replicaRefusingLogin(t, rec.hooks())
	ctx := context.Background()
	rec.reset()
	v, err := redis.String(c.Do(ctx, "GET", "k"))
	if err != nil || v != "v" {
		t.Fatalf("GET k = %q, %v; want v from the master", v, err)
	}
	got := rec.snapshot()
	if len(got.commands) == 0 {
		t.Fatal("the Command hook saw no attempt of the GET")
	}
	var onReplica []shard.CommandEvent
	for _, ev := range got.commands {
		if ev.Node.Addr == replica.Addr {
			onReplica = append(onReplica, ev)
		}
	}
	if len(onReplica) == 0 {
		t.Fatalf("no attempt on the replica %s: %v", replica.Addr, got.commands)
	}
	for _, ev := range onReplica {
		if ev.Outcome != shard.OutcomeRetry {
			t.Errorf("the replica's attempt is %s (%v), want retry: the client sent the read to the master", ev.Outcome, ev.Err)
		}
	}
	last := got.commands[len(got.commands)-1]
	if last.Outcome != shard.OutcomeOK || last.Node.Addr == replica.Addr {
		t.Errorf("the last attempt is %s on %s, want ok on the master", last.Outcome, last.Node.Addr)
	}
	if len(got.ops) != 1 || got.ops[0].Outcome != shard.OutcomeOK {
		t.Errorf("the operations: %v, want one ok", got.ops)
	}
}
