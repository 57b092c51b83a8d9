package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// TestTxFunctionsProtocolErrorEndsTheTransaction: a cluster transaction
// whose function reads with tx.Do a key over the server's
// proto-max-bulk-len gets the server's protocol error, after which the
// server closes the connection. A function that goes on (ignores the
// error and returns nil, or returns the error of its next tx.Do on the
// closed connection) used to have its transaction run again, function
// included, as if the node could not be reached: the function met the
// same refusal at each attempt, until MaxRetryWait was spent. The refusal
// recurs whatever the topology: the transaction ends at once, after one
// run of the function, with an error that wraps the server's refusal
// (ignored) or the function's own error (returned).
func TestTxFunctionsProtocolErrorEndsTheTransaction(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: rc.Seeds()}
	cfg.Pool = pool.Options{DialTimeout: 3 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	// No health checks: the resets of the rounds whose big key's write
	// the server cut short would mark the node down.
	cfg.Health.Interval = -1
	const maxRetryWait = 20 * time.Second
	cfg.Cluster.MaxRetryWait = maxRetryWait
	c := newClient(t, cfg)
	ctx := context.Background()
	big := "{r15fn}" + strings.Repeat("x", 1<<20+1) // a key over proto-max-bulk-len

	for _, returnNext := range []bool{false, true} {
		name := "ignored"
		if returnNext {
			name = "next Do's error returned"
		}
		t.Run(name, func(t *testing.T) {
			// On a loaded machine the server often resets the
			// connection while the big key is still being written
			// rather than answering it: rounds until the protocol error
			// came back as a reply, twice.
			replied := 0
			for round := 0; round < 400 && replied < 2; round++ {
				runs, gotReply := 0, false
				var nextErr error
				began := time.Now()
				_, err := c.Tx(ctx, []string{"{r15fn}k"}, func(tx *shard.Tx) error {
					runs++
					_, gerr := tx.Do("GET", big)
					if runs == 1 && isProtocolErrorReply(gerr) {
						gotReply = true
					}
					if returnNext {
						_, nextErr = tx.Do("GET", "{r15fn}k")
						if err := tx.Queue("INCR", "{r15fn}k"); err != nil {
							return err
						}
						return nextErr
					}
					return tx.Queue("INCR", "{r15fn}k")
				})
				took := time.Since(began)
				if !gotReply {
					continue
				}
				replied++
				if runs != 1 {
					t.Errorf("round %d: the function ran %d times (in %v; error %v), want once", round, runs, took, err)
				}
				var re *shard.RetryError
				if errors.As(err, &re) {
					t.Errorf("round %d: %v, a *RetryError: the transaction was run again until MaxRetryWait", round, err)
				}
				if returnNext {
					if err == nil || !errors.Is(err, nextErr) {
						t.Errorf("round %d: %v, want the function's error %v", round, err, nextErr)
					}
				} else if !isProtocolErrorReply(err) {
					t.Errorf("round %d: %v, want an error wrapping the server's protocol error", round, err)
				}
				if t.Failed() {
					return
				}
			}
			if replied == 0 {
				t.Fatal("the protocol error never came back as a reply in 400 rounds")
			}
		})
	}
	// No EXEC ran: the queued INCR never did.
	if n, err := c.Do(ctx, "EXISTS", "{r15fn}k"); err != nil || n != int64(0) {
		t.Errorf("EXISTS {r15fn}k = %v, %v; want 0: a transaction ran", n, err)
	}
}
