package shard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestLearnFailureOfOneCallIsNotCachedForTheCommand: a command the
// table does not know (SET renamed STORE, OBJECT renamed INSPECT) is
// learned on its first call, whose arguments COMMAND GETKEYS checks.
// When that check refuses the arguments of one call (a wrong arity, a
// subcommand that does not exist), that call fails, but the command is
// not refused for the calls that follow with good arguments.
func TestLearnFailureOfOneCallIsNotCachedForTheCommand(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{Args: []string{
		"--rename-command", "SET", "STORE",
		"--rename-command", "OBJECT", "INSPECT",
	}})
	c := newClient(t, ringConfig(servers))

	// A wrong arity first: the server refuses these arguments.
	if _, err := c.Do(ctx, "STORE", "percall:a"); err == nil {
		t.Fatal("STORE with a key and no value succeeded")
	}
	if _, err := c.Do(ctx, "STORE", "percall:a", "1"); err != nil {
		t.Fatalf("STORE with good arguments after one with a wrong arity: %v", err)
	}

	// A subcommand that does not exist first.
	if _, err := c.Do(ctx, "INSPECT", "NOSUCHSUB", "percall:a"); err == nil {
		t.Fatal("INSPECT NOSUCHSUB succeeded")
	}
	enc, err := redis.String(c.Do(ctx, "INSPECT", "ENCODING", "percall:a"))
	if err != nil || enc != "int" {
		t.Fatalf("INSPECT ENCODING after INSPECT NOSUCHSUB = %q, %v; want \"int\"", enc, err)
	}

	// The same inside a transaction, which learns before queueing, on a
	// client that has learned nothing yet.
	c2 := newClient(t, ringConfig(servers))
	if _, err := c2.Tx(ctx, []string{"percall:a"}, func(tx *shard.Tx) error {
		return tx.Queue("INSPECT", "NOSUCHSUB", "percall:a")
	}); err == nil {
		t.Fatal("a transaction queueing INSPECT NOSUCHSUB succeeded")
	}
	res, err := c2.Tx(ctx, []string{"percall:a"}, func(tx *shard.Tx) error {
		return tx.Queue("INSPECT", "ENCODING", "percall:a")
	})
	if err != nil || len(res) != 1 {
		t.Fatalf("a transaction queueing INSPECT ENCODING after INSPECT NOSUCHSUB: %v, %v", res, err)
	}
}

// TestLearnRaceOfBadAndGoodCalls: callers learning the same command at
// once, some with arguments the server refuses, others with good ones.
// Whatever the order, the good calls succeed, during the race and after
// it: a refusal of one call's arguments never wins over the command.
// (INSPECT ENCODING of a missing key answers nil, not an error.)
func TestLearnRaceOfBadAndGoodCalls(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{Args: []string{"--rename-command", "OBJECT", "INSPECT"}})
	const rounds, callers = 20, 8
	for r := range rounds {
		c, err := shard.New(ctx, ringConfig(servers))
		if err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for g := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				key := fmt.Sprintf("race:%d:%d", r, g)
				if g%2 == 0 {
					_, _ = c.Do(ctx, "INSPECT", "NOSUCHSUB", key) // refused
					return
				}
				_, errs[g] = c.Do(ctx, "INSPECT", "ENCODING", key)
			}()
		}
		close(start)
		wg.Wait()
		for g, err := range errs {
			if err != nil {
				t.Errorf("round %d: INSPECT ENCODING of caller %d during the race: %v", r, g, err)
			}
		}
		_, err = c.Do(ctx, "INSPECT", "ENCODING", fmt.Sprintf("race:%d:after", r))
		if err != nil {
			t.Errorf("round %d: INSPECT ENCODING after the race: %v (unknown: %t)", r, err, errors.Is(err, shard.ErrUnknownCommand))
		}
		c.Close()
		if t.Failed() {
			return
		}
	}
}
