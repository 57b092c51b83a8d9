package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A pipeline of 20 commands the table does not know (a renamed SET),
// while the only server hangs: the server is asked about the command once
// for the pipeline, not once per command, so Exec fails every command
// with ErrUnknownCommand after one read timeout. It used to ask again for
// each of them and took 20 read timeouts (10 s here).
func TestReview5PipelineLearnsAnUnknownCommandOnce(t *testing.T) {
	const readTimeout = 500 * time.Millisecond
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--rename-command", "SET", "STORE"}})
	c := newClient(t, faultConfig(server.Addr, readTimeout))
	ctx := context.Background()
	_, err := c.Do(ctx, "GET", "review5:warm") // a pooled connection, made while it answers
	require.NoError(t, err)

	require.NoError(t, server.Pause())
	defer func() { require.NoError(t, server.Resume()) }()
	const n = 20
	p := c.Pipeline()
	for range n {
		p.Send("STORE", "review5:k", "v")
	}
	start := time.Now()
	res, err := p.Exec(ctx)
	took := time.Since(start)
	require.NoError(t, err)
	require.Len(t, res, n)
	for i, r := range res {
		require.True(t, errors.Is(r.Err, shard.ErrUnknownCommand), "command %d: %v, want ErrUnknownCommand", i, r.Err)
	}
	require.Less(t, took, 5*time.Second, "Exec took %v: the hung server was asked about STORE for every command", took)
}
