package shard_test

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// A Conn's MULTI ... EXEC begun while a Sentinel shard's master was dead
// failed at once with the dial's error, while Do waited for the new
// master within FailoverWait: nothing of the transaction had been sent
// (its connection could not be made), so waiting is safe. It now waits,
// and the transaction runs once, on the new master.
func TestReview12SentinelConnTxWaitsForNewMaster(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = 30 * time.Second
	c := newClient(t, cfg)
	old, replica := shardServers(t, set, 0)
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}

	conn := c.Conn()
	defer conn.Close()
	for _, cmd := range [][]any{{"MULTI"}, {"INCR", "{t}n"}, {"SET", "{t}k", "v"}} {
		if _, err := conn.Do(cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatalf("%v on a shard whose master is dead: %v (want a wait for the new master within FailoverWait)", cmd, err)
		}
	}
	got, err := redis.Values(conn.Do("EXEC"))
	if err != nil || len(got) != 2 {
		t.Fatalf("EXEC = %v, %v; want 2 replies", got, err)
	}

	// Send ... Do("EXEC") in one go, on a Conn of its own.
	conn2 := c.Conn()
	defer conn2.Close()
	for _, cmd := range [][]any{{"MULTI"}, {"INCR", "{t}n"}} {
		if err := conn2.Send(cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := redis.Values(conn2.Do("EXEC")); err != nil || len(got) != 1 {
		t.Fatalf("EXEC = %v, %v; want 1 reply", got, err)
	}
	if n, err := replica.Do("GET", "{t}n"); err != nil || n != "2" {
		t.Errorf("the promoted replica holds {t}n = %q, %v; want 2 (each transaction ran once)", n, err)
	}
	if m := c.Stats().Sentinel[0].Master; m != replica.Addr {
		t.Errorf("the client's master is %s, want the promoted %s", m, replica.Addr)
	}
}
