package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview2TxExecWithoutReplyIsUnknownOutcome: EXEC written, then no
// reply within the read timeout: the transaction may have run (here it
// did), so the error is an *UnknownOutcomeError for EXEC, as for any
// write whose connection failed after sending, and still a *NodeError.
func TestReview2TxExecWithoutReplyIsUnknownOutcome(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout = 200 * time.Millisecond
	c := newClient(t, cfg)
	bg := context.Background()
	_, err := c.Tx(bg, []string{"r2tx:uo"}, func(tx *shard.Tx) error {
		if err := tx.Queue("INCR", "r2tx:uo"); err != nil {
			return err
		}
		return tx.Queue("DEBUG", "SLEEP", "0.6") // holds EXEC's reply past the read timeout
	})
	require.Error(t, err)
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "a *NodeError: %v", err)
	var uo *shard.UnknownOutcomeError
	require.True(t, errors.As(err, &uo), "an *UnknownOutcomeError: %v", err)
	require.Equal(t, "EXEC", uo.Command)
	require.Equal(t, servers[0].Addr, uo.Node.Addr)
	// It did run.
	waitFor(t, 10*time.Second, "the INCR to be visible", func() bool {
		n, err := redis.Int(c.Do(bg, "GET", "r2tx:uo"))
		return err == nil && n == 1
	})
}

// TestReview2TxContextEndsWhileExecWaits: the context ends after EXEC was
// written (the server holds it: CLIENT PAUSE WRITE): the error wraps
// context.Canceled and says the transaction may have run.
func TestReview2TxContextEndsWhileExecWaits(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout = 5 * time.Second
	c := newClient(t, cfg)
	bg := context.Background()
	admin, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer admin.Close()
	_, err = admin.Do("CLIENT", "PAUSE", "20000", "WRITE")
	require.NoError(t, err)
	defer admin.Do("CLIENT", "UNPAUSE")
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	watched := make(chan error, 1)
	go func() {
		// Cancel once the server holds the transaction's EXEC.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			s, err := redis.String(admin.Do("CLIENT", "LIST"))
			if err != nil {
				watched <- err
				cancel()
				return
			}
			if strings.Contains(s, "flags=xb") { // in MULTI, blocked: EXEC is held
				watched <- nil
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond) // polling the condition
		}
		watched <- errors.New("EXEC never reached the server")
		cancel()
	}()
	_, err = c.Tx(ctx, []string{"r2tx:cw"}, func(tx *shard.Tx) error {
		return tx.Queue("INCR", "r2tx:cw")
	})
	require.NoError(t, <-watched)
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, err.Error(), "may have run")
}
