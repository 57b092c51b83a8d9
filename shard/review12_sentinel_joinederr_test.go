package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
)

// checkOnePrefix fails unless msg starts with "shardis: " and holds it
// nowhere else.
func checkOnePrefix(t *testing.T, what, msg string) {
	t.Helper()
	if !strings.HasPrefix(msg, "shardis: ") || strings.Count(msg, "shardis:") != 1 {
		t.Errorf("%s: %q; want \"shardis: \" once, at the start", what, msg)
	}
}

// The errors of several Sentinel shards, joined, read as one error:
// Refresh gave one line per shard, each starting "shardis: " again,
// without saying what failed (New's discovery error says so once).
// errors.Is and errors.As still find every shard's *sentinel.SetError.
func TestReview12SentinelJoinedErrorsReadAsOne(t *testing.T) {
	o := sentinelSetOptions(2)
	o.Sentinels = 2
	set := redistest.StartSentinelsTB(t, o)
	cfg := sentinelConfig(set)
	c := newClient(t, cfg)
	for _, s := range set.Sentinels {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s with every Sentinel dead: no error", what)
		}
		msg := err.Error()
		checkOnePrefix(t, what, msg)
		for _, want := range []string{"Sentinel shard shard-0", "Sentinel shard shard-1", "connection refused"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not say %q", what, msg, want)
			}
		}
		var se *sentinel.SetError
		if !errors.Is(err, sentinel.ErrNoSentinel) || !errors.As(err, &se) {
			t.Errorf("%s: %v does not match sentinel.ErrNoSentinel and *sentinel.SetError", what, err)
		}
	}
	check("Refresh", c.Refresh(context.Background()))
	_, err := shard.New(context.Background(), cfg)
	check("New", err)
}

// A command that waits within FailoverWait for a new master and whose
// context ends first failed with "context deadline exceeded" on one line
// and the node's error, "shardis: node ...", on a second: the prefix in
// the middle, and nothing saying that the command was waiting for a new
// master.
func TestReview12SentinelDoContextEndsDuringFailoverWait(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = time.Minute
	c := newClient(t, cfg)
	old, _ := shardServers(t, set, 0)
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.Do(ctx, "GET", "k")
	if err == nil {
		t.Fatal("GET on a dead master with a 300ms context: no error")
	}
	msg := err.Error()
	checkOnePrefix(t, "GET", msg)
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "new master") || !strings.Contains(msg, "connection refused") {
		t.Errorf("GET: %q; want one line that says it waited for a new master, and why", msg)
	}
	var ne *shard.NodeError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ne) {
		t.Errorf("GET: %v does not match context.DeadlineExceeded and *shard.NodeError", err)
	}
}
