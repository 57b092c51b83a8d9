package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestLearnsRenamedCommands proves the run-time path for commands the
// generated table does not know: servers whose SET, MGET and OBJECT are
// renamed (rename-command) answer STORE, FETCHMANY and INSPECT, which only
// COMMAND INFO can describe. The client learns them, routes every key to
// the shard that owns it (the plain GET that reads them back is routed by
// the table), refuses a cross-shard FETCHMANY it cannot split, and keeps
// a command the servers do not know either unknown.
func TestLearnsRenamedCommands(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{Args: []string{
		"--rename-command", "SET", "STORE",
		"--rename-command", "MGET", "FETCHMANY",
		"--rename-command", "OBJECT", "INSPECT",
	}})
	c := newClient(t, ringConfig(servers))

	const n = 200
	for i := range n {
		if _, err := c.Do(ctx, "STORE", fmt.Sprintf("learn:%d", i), i); err != nil {
			t.Fatalf("STORE learn:%d: %v", i, err)
		}
	}
	// Every key is where the ring puts it: GET (a table command) finds it.
	for i := range n {
		v, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("learn:%d", i)))
		if err != nil || v != i {
			t.Fatalf("GET learn:%d = %d, %v", i, v, err)
		}
	}
	// And the keys are spread, so routing was not a lucky single shard.
	for _, s := range servers {
		if size, err := s.Do("DBSIZE"); err != nil || size == "0" {
			t.Fatalf("%s holds %s keys (%v)", s.Addr, size, err)
		}
	}

	// A multi-key command learned at run time: keys of one tag work, keys
	// on different shards are refused before anything is sent.
	if _, err := c.Do(ctx, "STORE", "{u1}.a", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, "STORE", "{u1}.b", "y"); err != nil {
		t.Fatal(err)
	}
	got, err := redis.Strings(c.Do(ctx, "FETCHMANY", "{u1}.a", "{u1}.b"))
	if err != nil || len(got) != 2 || got[0] != "x" || got[1] != "y" {
		t.Fatalf("FETCHMANY = %q, %v", got, err)
	}
	keys := make([]any, 0, 20)
	for i := range 20 {
		keys = append(keys, fmt.Sprintf("learn:%d", i))
	}
	_, err = c.Do(ctx, "FETCHMANY", keys...)
	var cse *shard.CrossShardError
	if !errors.As(err, &cse) {
		t.Fatalf("FETCHMANY over 20 keys: %v, want a *CrossShardError", err)
	}

	// A learned container command: its subcommand's key is routed too,
	// inside a pipeline.
	p := c.Pipeline()
	for i := range 10 {
		p.Send("INSPECT", "ENCODING", fmt.Sprintf("learn:%d", i))
	}
	res, err := p.Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 10 {
		t.Fatalf("%d results for 10 commands", len(res))
	}
	for i, r := range res {
		if enc, err := redis.String(r.Reply, r.Err); err != nil || enc != "int" {
			t.Errorf("INSPECT ENCODING learn:%d = %q, %v", i, enc, err)
		}
	}

	// The servers do not know SET any more, nor a made-up command.
	for _, name := range []string{"SET", "NOSUCHCOMMAND"} {
		_, err := c.Do(ctx, name, "k", "v")
		if name == "SET" {
			// SET is in the table, so it is routed and the server refuses it.
			var re redis.Error
			if !errors.As(err, &re) {
				t.Errorf("SET on a server without SET: %v, want the server's error", err)
			}
			continue
		}
		if !errors.Is(err, shard.ErrUnknownCommand) {
			t.Errorf("%s: %v, want ErrUnknownCommand", name, err)
		}
	}
}

// TestTransactionsUseLearnedCommands: Tx and a Conn transaction check
// their keys before anything is sent, so they must know commands the
// table does not: a renamed SET inside MULTI works on one shard, and keys
// on two shards are refused before anything runs. The client has not
// learned the command before the transaction asks.
func TestTransactionsUseLearnedCommands(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{Args: []string{"--rename-command", "SET", "STORE"}})
	c := newClient(t, ringConfig(servers))

	res, err := c.Tx(ctx, []string{"{tx}.a"}, func(tx *shard.Tx) error {
		if err := tx.Queue("STORE", "{tx}.a", "1"); err != nil {
			return err
		}
		return tx.Queue("STORE", "{tx}.b", "2")
	})
	if err != nil || len(res) != 2 {
		t.Fatalf("Tx with a learned command: %v, %v", res, err)
	}
	for _, k := range []string{"{tx}.a", "{tx}.b"} {
		if _, err := redis.String(c.Do(ctx, "GET", k)); err != nil {
			t.Fatalf("GET %s after the transaction: %v", k, err)
		}
	}

	// A Conn transaction whose learned command names keys on two shards
	// is refused before anything runs.
	var a, b string
	for i := 0; a == "" || b == ""; i++ {
		k := fmt.Sprintf("conn:%d", i)
		n, err := c.Router().Route(k)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case a == "":
			a = k
		case n != mustRoute(t, c, a):
			b = k
		}
	}
	conn := c.Conn()
	defer conn.Close()
	if err := conn.Send("MULTI"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Send("STORE", a, "x")
	_ = conn.Send("STORE", b, "y")
	_, err = conn.Do("EXEC")
	var cse *shard.CrossShardError
	if !errors.As(err, &cse) {
		t.Fatalf("a cross-shard Conn transaction of a learned command: %v, want a *CrossShardError", err)
	}
	for _, k := range []string{a, b} {
		if _, err := redis.String(c.Do(ctx, "GET", k)); !errors.Is(err, redis.ErrNil) {
			t.Fatalf("GET %s after the refused transaction: %v, want nil (nothing ran)", k, err)
		}
	}
}

func mustRoute(t *testing.T, c *shard.Client, key string) shard.Node {
	t.Helper()
	n, err := c.Router().Route(key)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
