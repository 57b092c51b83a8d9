package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
)

// checkPrefixOnce fails t when msg does not start with "shardis: ", names
// it again, or names a sub-package's prefix more than once on a line (a
// list of errors has one per line, each may come from a sub-package).
func checkPrefixOnce(t *testing.T, msg string) {
	t.Helper()
	if !strings.HasPrefix(msg, "shardis: ") {
		t.Errorf("%q does not start with \"shardis: \"", msg)
	}
	if n := strings.Count(msg, "shardis:"); n > 1 {
		t.Errorf("\"shardis:\" appears %d times in %q, want once", n, msg)
	}
	for _, line := range strings.Split(msg, "\n") {
		for _, p := range errTextPrefixes {
			if n := strings.Count(line, p); n > 1 {
				t.Errorf("%q appears %d times in the line %q, want at most once", p, n, line)
			}
		}
	}
}

// unwrapAll returns the errors err joins (Unwrap() []error), nil when it
// joins none.
func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return nil
}

// A ForEachShard whose function fails on two of three shards (one server
// down, one function returning two library errors joined) gives one
// error that says which call failed and how many nodes did, names each
// failed node once with its own cause under it, starts with the package
// prefix once, and still joins one *NodeError per failed node
// (Unwrap() []error, which the CLI's stats reads) that errors.Is and
// errors.As find.
func TestReview12ForEachShardErrorNamesEachFailedNode(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	if err := servers[1].Stop(); err != nil {
		t.Fatal(err)
	}
	err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		if n.Name != "shard-2" {
			return nil
		}
		_, unknown := c.Do(ctx, "REVIEW12.NOSUCH", "x")
		_, noKey := c.Do(ctx, "PING", "a", "b", "c")
		return errors.Join(unknown, noKey)
	})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	t.Logf("%s", msg)
	checkPrefixOnce(t, msg)
	lines := strings.Split(msg, "\n")
	if want := "shardis: ForEachShard: 2 of 3 nodes failed:"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4 (the heading, shard-1, shard-2 and its second cause): %q", len(lines), msg)
	}
	if !strings.HasPrefix(lines[1], "node shard-1 (") || !strings.Contains(lines[1], "connection refused") {
		t.Errorf("line 2 %q, want shard-1's refused dial", lines[1])
	}
	if !strings.HasPrefix(lines[2], "node shard-2 (") || !strings.Contains(lines[2], `unknown command "review12.nosuch"`) {
		t.Errorf("line 3 %q, want shard-2's first cause", lines[2])
	}
	if !strings.HasPrefix(lines[3], "\tcommand has no key to route by: PING") {
		t.Errorf("line 4 %q, want shard-2's second cause, indented under it", lines[3])
	}
	for _, target := range []error{shard.ErrUnknownCommand, shard.ErrNoKey} {
		if !errors.Is(err, target) {
			t.Errorf("does not match %v", target)
		}
	}
	nodes := unwrapAll(err)
	if len(nodes) != 2 {
		t.Fatalf("Unwrap() []error holds %d errors, want 2", len(nodes))
	}
	for i, want := range []string{"shard-1", "shard-2"} {
		ne, ok := nodes[i].(*shard.NodeError)
		if !ok {
			t.Errorf("error %d is a %T, want a *shard.NodeError", i, nodes[i])
			continue
		}
		if ne.Node.Name != want {
			t.Errorf("error %d is of node %q, want %q", i, ne.Node.Name, want)
		}
	}
	var ne *shard.NodeError
	if !errors.As(err, &ne) {
		t.Error("errors.As finds no *shard.NodeError")
	}
}

// One node failing reads on one line.
func TestReview12ForEachNodeOneFailureOneLine(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 2)
	err := c.ForEachNode(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		if n.Name != "shard-1" {
			return nil
		}
		_, err := conn.Do("REVIEW12.NOSUCH")
		return err
	})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	checkPrefixOnce(t, msg)
	if want := "shardis: ForEachNode: 1 of 2 nodes failed: node shard-1 ("; !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") {
		t.Errorf("%q, want one line starting %q", msg, want)
	}
	var re redis.Error
	if !errors.As(err, &re) || !strings.Contains(string(re), "unknown command") {
		t.Errorf("errors.As finds no server error reply in %q", msg)
	}
	if got := len(unwrapAll(err)); got != 1 {
		t.Errorf("Unwrap() []error holds %d errors, want 1", got)
	}
}

// Refresh with two Sentinel shards whose Sentinels are gone names both
// shards, says what failed, and starts with the package prefix once.
func TestReview12RefreshSentinelsErrorNamesEachShard(t *testing.T) {
	ctx := context.Background()
	o := sentinelSetOptions(2)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	c := newClient(t, sentinelConfig(set))
	if err := set.Sentinels[0].Kill(); err != nil {
		t.Fatal(err)
	}
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		// MinRefreshInterval may hold a query back: ask until both fail.
		err = c.Refresh(ctx)
		if len(unwrapAll(err)) < 2 {
			err = nil
			time.Sleep(50 * time.Millisecond)
		}
	}
	if err == nil {
		t.Fatal("Refresh did not fail for both shards")
	}
	msg := err.Error()
	t.Logf("%s", msg)
	checkPrefixOnce(t, msg)
	lines := strings.Split(msg, "\n")
	if len(lines) < 3 {
		t.Fatalf("%d lines, want a heading and one per shard: %q", len(lines), msg)
	}
	if want := "shardis: Refresh: 2 of 2 Sentinel shards named no confirmed master:"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	for _, name := range []string{"shard-0", "shard-1"} {
		if !strings.Contains(msg, "Sentinel shard "+name+": ") {
			t.Errorf("%q does not name %s", msg, name)
		}
	}
	if !errors.Is(err, sentinel.ErrNoSentinel) {
		t.Error("does not match sentinel.ErrNoSentinel")
	}
}
