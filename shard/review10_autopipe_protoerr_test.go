package shard_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview10AutoPipelineOversizedValuesAreNeverOfUnknownOutcome: callers
// sharing the automatic pipeline send values over the server's
// proto-max-bulk-len at once. The server refuses each connection's first
// one with a protocol error and resets the connection; no command on it
// runs. Every caller must learn that its SET was refused or did not run:
// the connection's error (a reset, or the abort that follows a protocol
// error) given to a command the writer could no longer write, or to one
// written whole whose refusal was still in the socket, read as a write of
// unknown outcome.
func TestReview10AutoPipelineOversizedValuesAreNeverOfUnknownOutcome(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := faultConfig(server.Addr, 5*time.Second)
	// Health checks on (rarely run), so that failures of the node would
	// mark it down: a refused command is no failure of the node.
	cfg.Health = shard.HealthOptions{Interval: time.Hour}
	c := newClient(t, cfg)
	big := strings.Repeat("x", 1<<20+1)
	const callers, each = 6, 150
	errs := make(chan error, callers*each)
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, err := c.Do(context.Background(), "SET", "r10:ap:big", big)
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	unknown, ran := 0, 0
	var first error
	for err := range errs {
		if err == nil {
			ran++
			continue
		}
		var uo *shard.UnknownOutcomeError
		if errors.As(err, &uo) {
			unknown++
			if first == nil {
				first = err
			}
		}
	}
	require.Zero(t, ran, "SETs over proto-max-bulk-len succeeded")
	if unknown > 0 {
		t.Errorf("%d of %d refused SETs reported as of unknown outcome, the first: %v", unknown, callers*each, first)
	}
	require.False(t, c.Stats().Nodes[0].Down, "the node, which answers, was marked down by refused commands")
	n, err := server.Do("EXISTS", "r10:ap:big")
	require.NoError(t, err)
	require.Equal(t, "0", n)
}
