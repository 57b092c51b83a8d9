package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// docs/pubsub.md: "SubscribeKeyspace ... returns no subscription on error:
// one node that cannot be reached at the start fails it. To follow the
// nodes that answer and pick up the others when they do, make the
// subscription with client.NewKeyspaceSubscription(opts) and add the
// patterns with its PSubscribe: its *shard.NodeError names the node, and
// the patterns stay and are subscribed there (after the CONFIG SET) once
// it answers." Each sentence, against a ring shard that is down at the
// start and comes back.
func TestReview11KeyspaceSubscriptionWithAShardDownAtTheStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	down := servers[1]
	var key string
	for i := 0; i < 1000 && key == ""; i++ {
		k := fmt.Sprintf("ks:%d", i)
		n, err := c.Router().Route(k)
		if err != nil {
			t.Fatal(err)
		}
		if n.Addr == down.Addr {
			key = k
		}
	}
	if key == "" {
		t.Fatal("no key of the second shard among 1000")
	}
	if err := down.Kill(); err != nil {
		t.Fatal(err)
	}
	opts := shard.KeyspaceOptions{Enable: "E$", Patterns: []string{"__keyevent@*__:set"}}

	sub, err := c.SubscribeKeyspace(ctx, opts)
	var ne *shard.NodeError
	if !errors.As(err, &ne) {
		t.Fatalf("SubscribeKeyspace with a shard down: %v, want a *shard.NodeError", err)
	}
	if ne.Node.Addr != down.Addr {
		t.Errorf("the *shard.NodeError names %s, want the shard down, %s", ne.Node.Addr, down.Addr)
	}
	if sub != nil {
		t.Errorf("SubscribeKeyspace returned a subscription with its error")
		sub.Close()
	}

	events, err := c.NewKeyspaceSubscription(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	err = events.PSubscribe(ctx, opts.Patterns...)
	ne = nil
	if !errors.As(err, &ne) || ne.Node.Addr != down.Addr {
		t.Fatalf("PSubscribe with a shard down: %v, want a *shard.NodeError naming %s", err, down.Addr)
	}

	if err := down.Restart(); err != nil {
		t.Fatal(err)
	}
	// Once the shard answers, a SET there must come back as an event: the
	// pattern was kept and subscribed there after CONFIG SET.
	deadline := time.Now().Add(30 * time.Second)
	got := false
	for !got && time.Now().Before(deadline) {
		if _, err := c.Do(ctx, "SET", key, "v"); err != nil {
			t.Logf("SET %s: %v", key, err)
		}
		rctx, rcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		for {
			v, err := events.Receive(rctx)
			if err != nil {
				break
			}
			if m, ok := v.(redis.Message); ok {
				if ev, ok := shard.ParseKeyspaceEvent(m); ok && ev.Key == key && ev.Event == "set" {
					got = true
					break
				}
			}
		}
		rcancel()
	}
	if !got {
		t.Fatalf("no set event for %s from the restarted shard within 30s", key)
	}
	conf, err := down.Do("CONFIG", "GET", "notify-keyspace-events")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(conf, "E") || !strings.Contains(conf, "$") {
		t.Errorf("the restarted shard's notify-keyspace-events is %q, want E and $ (Enable)", conf)
	}
}
