package shard_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// review12StalledSubscription starts three ring shards and a
// subscription over them whose connections only break on a failed write
// (no health checks, no subscription PINGs for minutes), with a write
// timeout of a second; subscribe sets up its names.
func review12StalledSubscription(t *testing.T, subscribe func(ctx context.Context, c *shard.Client, sub *shard.Subscription) error) (*shard.Subscription, []*redistest.Server) {
	t.Helper()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1
	cfg.Pool.WriteTimeout = time.Second
	c := newClient(t, cfg)
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: 5 * time.Minute, PingTimeout: 5 * time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { sub.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, subscribe(ctx, c, sub))
	require.Equal(t, 3, sub.Stats().Connections)
	return sub, servers
}

// checkSubscriptionNodesError checks the error of a subscription call
// that met a write it could not make on shard-1 and shard-2 (stopped,
// their socket buffers full) and succeeded on shard-0.
func checkSubscriptionNodesError(t *testing.T, err error, call string, servers []*redistest.Server) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", call)
	}
	msg := err.Error()
	t.Logf("%s", msg)
	checkPrefixOnce(t, msg)
	lines := strings.Split(msg, "\n")
	if want := "shardis: " + call + ": 2 of 3 nodes failed:"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3 (the heading, shard-1, shard-2): %q", len(lines), msg)
	}
	nodes := unwrapAll(err)
	if len(nodes) != 2 {
		t.Fatalf("Unwrap() []error holds %d errors, want 2", len(nodes))
	}
	got := map[string]bool{}
	for i, e := range nodes {
		var ne *shard.NodeError
		if !errors.As(e, &ne) {
			t.Errorf("error %d is a %T, want a *shard.NodeError", i, e)
			continue
		}
		got[ne.Node.Addr] = true
		if !errors.Is(e, os.ErrDeadlineExceeded) {
			t.Errorf("error %d (%v) does not match os.ErrDeadlineExceeded", i, e)
		}
	}
	for i, s := range servers[1:] {
		if !got[s.Addr] {
			t.Errorf("no *NodeError for shard-%d (%s) among %v", i+1, s.Addr, nodes)
		}
		if want := fmt.Sprintf("node shard-%d (%s): ", i+1, s.Addr); !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("line %d %q, want shard-%d's, starting %q", i+2, lines[i+1], i+1, want)
		}
	}
	var ne *shard.NodeError
	if !errors.As(err, &ne) {
		t.Error("errors.As finds no *shard.NodeError")
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Error("errors.Is(err, os.ErrDeadlineExceeded) is false")
	}
}

// A Ping whose write fails on two of three connections (their servers
// stopped; data larger than the socket buffers) said
// "shardis: node shard-1 ...\nshardis: node shard-2 ...": the prefix on
// every line, and nothing of which call failed nor on how many nodes.
func TestReview12SubscriptionPingErrorNamesEachFailedNode(t *testing.T) {
	sub, servers := review12StalledSubscription(t, func(ctx context.Context, _ *shard.Client, sub *shard.Subscription) error {
		return sub.PSubscribe(ctx, "r12ping:*")
	})
	pauseUntilCleanup(t, servers[1])
	pauseUntilCleanup(t, servers[2])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := sub.Ping(ctx, strings.Repeat("p", 24<<20))
	checkSubscriptionNodesError(t, err, "Ping", servers)
}

// The same for Unsubscribe of every channel, whose names on the two
// stopped servers (48 MiB on each: more than the socket buffers of both
// ends, which grew while the names were subscribed) fill their sockets.
func TestReview12SubscriptionUnsubscribeErrorNamesEachFailedNode(t *testing.T) {
	sub, servers := review12StalledSubscription(t, func(ctx context.Context, c *shard.Client, sub *shard.Subscription) error {
		// A pattern on every shard keeps the connections in use: one
		// that carries nothing once the channels are dropped may be
		// closed as idle, with nothing to report, while the Unsubscribe
		// waits on another node.
		if err := sub.PSubscribe(ctx, "r12unsubkeep:*"); err != nil {
			return err
		}
		names := review12Channels(t, c.Router(), map[string]int{"shard-0": 1, "shard-1": 48, "shard-2": 48})
		// A few at a time: a server closes a subscriber whose
		// confirmations (which repeat the names) pass 32 MiB.
		for len(names) > 0 {
			n := min(len(names), 8)
			if err := sub.Subscribe(ctx, names[:n]...); err != nil {
				return err
			}
			names = names[n:]
		}
		return nil
	})
	pauseUntilCleanup(t, servers[1])
	pauseUntilCleanup(t, servers[2])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := sub.Unsubscribe(ctx)
	checkSubscriptionNodesError(t, err, "Unsubscribe", servers)
}

// review12Channels returns channel names of a MiB each, as many on each
// node of router as want says (by node name).
func review12Channels(t *testing.T, router shard.Router, want map[string]int) []string {
	t.Helper()
	total := 0
	for _, n := range want {
		total += n
	}
	pad := strings.Repeat("x", 1<<20)
	count := map[string]int{}
	var names []string
	for i := 0; len(names) < total; i++ {
		if i > 100*total {
			t.Fatalf("found only %d channels of the %d wanted (%v)", len(names), total, want)
		}
		name := fmt.Sprintf("r12unsub:{%d}:%s", i, pad) // placed by the tag: quick to hash
		node, err := router.Route(name)
		require.NoError(t, err)
		if count[node.Name] < want[node.Name] {
			count[node.Name]++
			names = append(names, name)
		}
	}
	return names
}

// One node failing reads on one line.
func TestReview12SubscriptionPingOneFailureOneLine(t *testing.T) {
	sub, servers := review12StalledSubscription(t, func(ctx context.Context, _ *shard.Client, sub *shard.Subscription) error {
		return sub.PSubscribe(ctx, "r12ping1:*")
	})
	pauseUntilCleanup(t, servers[1])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := sub.Ping(ctx, strings.Repeat("p", 24<<20))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	checkPrefixOnce(t, msg)
	want := fmt.Sprintf("shardis: Ping: 1 of 3 nodes failed: node shard-1 (%s): ", servers[1].Addr)
	if !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") {
		t.Errorf("%q, want one line starting %q", msg, want)
	}
	var ne *shard.NodeError
	if !errors.As(err, &ne) || ne.Node.Addr != servers[1].Addr {
		t.Errorf("errors.As finds no *shard.NodeError of %s in %q", servers[1].Addr, msg)
	}
	if got := len(unwrapAll(err)); got != 1 {
		t.Errorf("Unwrap() []error holds %d errors, want 1", got)
	}
}
