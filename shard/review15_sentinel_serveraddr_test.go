package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// The events of a command sent to a Sentinel shard name the server the
// command went to: the master its connection was dialed to, not the
// master the shard has when the event is reported. A command sent to the
// old master and answered after the client followed a failover was
// reported as served by the new master, which it never reached: traces
// and metrics blamed the wrong server.
func TestReview15SentinelEventsNameTheServerTheCommandWentTo(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	var mu sync.Mutex
	var events []shard.CommandEvent
	var ops []shard.Op
	cfg.Hooks = &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, *ev)
		},
		Finish: func(_ context.Context, op *shard.Op) {
			mu.Lock()
			defer mu.Unlock()
			ops = append(ops, *op)
		},
	}
	c := newClient(t, cfg)
	ctx := context.Background()
	old, replica := shardServers(t, set, 0)
	if old.Addr == replica.Addr {
		t.Fatal("the master and the replica are one server")
	}
	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	serversOf := func(name string) (evs, finished []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range events {
			if ev.Name == name {
				evs = append(evs, ev.ServerAddr)
			}
		}
		for _, op := range ops {
			if op.Name == name {
				finished = append(finished, op.ServerAddr)
			}
		}
		return evs, finished
	}

	// A BLPOP that waits on the old master while the client follows the
	// failover.
	blpop := make(chan error, 1)
	bctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	go func() {
		_, err := c.Do(bctx, "BLPOP", "review15:list", 0)
		blpop <- err
	}()
	waitFor(t, 30*time.Second, "the BLPOP to wait on the old master", func() bool {
		list, err := old.Do("CLIENT", "LIST")
		return err == nil && strings.Contains(list, "cmd=blpop")
	})

	// A function of ForEachShard holds a connection to the old master
	// across the failover.
	failedOver := make(chan struct{})
	fnErr := c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		if _, err := conn.Do("GET", "k"); err != nil {
			return fmt.Errorf("GET before the failover: %w", err)
		}
		if err := failoverTo(set, c, replica); err != nil {
			return err
		}
		close(failedOver)
		conn.Do("GET", "k") // on the old master still, answered or failed
		return nil
	})
	if fnErr != nil {
		select {
		case <-failedOver:
		default:
			t.Fatal(fnErr)
		}
	}
	evs, finished := serversOf("GET")
	if len(evs) != 2 || len(finished) != 2 {
		t.Fatalf("GET events %v, operations %v; want two of each", evs, finished)
	}
	for i, addr := range evs {
		if addr != old.Addr {
			t.Errorf("GET %d on the connection to the old master %s: event names %s", i, old.Addr, addr)
		}
	}
	for i, addr := range finished {
		if addr != old.Addr {
			t.Errorf("GET %d on the connection to the old master %s: operation names %s", i, old.Addr, addr)
		}
	}

	// The BLPOP ends on the old master (unblocked there, or refused once
	// it is a replica): its first attempt went there.
	waitFor(t, 30*time.Second, "the old master to answer the BLPOP", func() bool {
		list, err := old.Do("CLIENT", "LIST")
		if err != nil {
			return false
		}
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, "cmd=blpop") {
				if id, ok := strings.CutPrefix(strings.Fields(line)[0], "id="); ok {
					old.Do("CLIENT", "UNBLOCK", id)
				}
				return false
			}
		}
		return true
	})
	select {
	case <-blpop:
	case <-time.After(60 * time.Second):
		t.Fatal("BLPOP did not return")
	}
	evs, _ = serversOf("BLPOP")
	if len(evs) == 0 || evs[0] != old.Addr {
		t.Errorf("BLPOP attempts named %v; want the first to name the old master %s", evs, old.Addr)
	}
}

// failoverTo asks the Sentinels of set's only shard for a failover and
// returns once c routes to next; it returns an error instead of failing t
// (it runs inside Tx and Conn code).
func failoverTo(set *redistest.SentinelSet, c *shard.Client, next *redistest.Server) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, err := set.Sentinels[0].Do("SENTINEL", "FAILOVER", set.Names()[0])
		if err == nil || strings.Contains(err.Error(), "INPROG") {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("SENTINEL FAILOVER: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for c.Stats().Sentinel[0].Master != next.Addr {
		if time.Now().After(deadline) {
			return fmt.Errorf("the client did not follow the new master %s", next.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// The same for a Client.Tx and a Conn's transaction whose connection
// went to the old master before the client followed a failover.
func TestReview15SentinelTxEventsNameTheServerTheyWentTo(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	var mu sync.Mutex
	var events []shard.CommandEvent
	cfg.Hooks = &shard.Hooks{Command: func(_ context.Context, ev *shard.CommandEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, *ev)
	}}
	c := newClient(t, cfg)
	ctx := context.Background()
	first, second := shardServers(t, set, 0)
	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	getsOn := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, ev := range events {
			if ev.Name == "GET" {
				out = append(out, ev.ServerAddr)
			}
		}
		events = nil
		return out
	}
	getsOn()

	// Client.Tx: WATCH on the first master, the failover, then a GET
	// through Tx.Do on the same connection.
	var failed error
	c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error {
		if failed = failoverTo(set, c, second); failed != nil {
			return failed
		}
		tx.Do("GET", "k")
		return errors.New("no transaction: the GET was all")
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if got := getsOn(); len(got) != 1 || got[0] != first.Addr {
		t.Errorf("Tx.Do GET sent to the old master %s: events name %v", first.Addr, got)
	}

	// A Conn pinned by WATCH to the second master, the failover back to
	// the first, then a GET on the pinned connection.
	conn := c.Conn()
	defer conn.Close()
	if _, err := conn.Do("WATCH", "k"); err != nil {
		t.Fatal(err)
	}
	if err := failoverTo(set, c, first); err != nil {
		t.Fatal(err)
	}
	conn.Do("GET", "k")
	if got := getsOn(); len(got) != 1 || got[0] != second.Addr {
		t.Errorf("GET on a Conn pinned to the old master %s: events name %v", second.Addr, got)
	}
}
