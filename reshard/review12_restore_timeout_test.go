package reshard_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview12RestoreTimeoutIsNotBlamedOnValueLimits: a new node that
// does not answer the mover's RESTOREs in time (here its writes are
// paused, CLIENT PAUSE WRITE, longer than Timeout) fails the batch with a
// timeout. The error said that the new node closes the connection of a
// value over its proto-max-bulk-len or client-query-buffer-limit, and
// told the operator to raise them, for a few bytes of value: nothing
// was closed and no limit was met. It must say the new node did not
// answer in time, and keep the timeout in its chain.
func TestReview12RestoreTimeoutIsNotBlamedOnValueLimits(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	fill(t, from, "rt", 5)
	t.Cleanup(func() { servers[1].Do("CLIENT", "UNPAUSE") })
	_, err := servers[1].Do("CLIENT", "PAUSE", "5000", "WRITE")
	require.NoError(t, err)
	// The paused new node would fail arming's probe of MIGRATE (rightly:
	// clients could not move keys to it); this test is about the mover's
	// own RESTORE.
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipProbe: true, Dump: true,
		Timeout: time.Second})
	require.Error(t, err)
	t.Logf("the error: %v", err)
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, servers[1].Addr, ne.Node.Addr, "names the new node")
	var nerr net.Error
	require.True(t, errors.As(err, &nerr) && nerr.Timeout(), "a timeout in the chain: %v", err)
	assert.NotContains(t, err.Error(), "proto-max-bulk-len")
	assert.NotContains(t, err.Error(), "client-query-buffer-limit")
	assert.Contains(t, err.Error(), "did not answer")
	n, err := servers[0].Do("DBSIZE")
	require.NoError(t, err)
	assert.NotEqual(t, "0", n, "the values stay at their old owner")
}

// TestReview12ClosedRestoreOfSmallValuesIsNotBlamedOnValueLimits: a new
// node that closes the mover's connection while its RESTOREs of a few
// bytes each wait (here a CLIENT KILL while the new node's writes are
// paused) is no value over its proto-max-bulk-len or
// client-query-buffer-limit either (Redis accepts neither under 1 MB):
// the error must not tell the operator to raise them.
func TestReview12ClosedRestoreOfSmallValuesIsNotBlamedOnValueLimits(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	fill(t, from, "rk", 5)
	t.Cleanup(func() { servers[1].Do("CLIENT", "UNPAUSE") })
	_, err := servers[1].Do("CLIENT", "PAUSE", "20000", "WRITE")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipProbe: true, Dump: true,
			Timeout: 10 * time.Second})
		done <- err
	}()
	// The mover's RESTOREs wait at the new node: a blocked client there.
	waitFor(t, 10*time.Second, "the RESTOREs held at the new node", func() bool {
		list, err := servers[1].Do("CLIENT", "LIST")
		return err == nil && strings.Contains(list, "flags=b")
	})
	_, err = servers[1].Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	require.NoError(t, err)
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the Move did not end after its connection to the new node was closed")
	}
	require.Error(t, err)
	t.Logf("the error: %v", err)
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, servers[1].Addr, ne.Node.Addr, "names the new node")
	assert.NotContains(t, err.Error(), "proto-max-bulk-len")
	assert.NotContains(t, err.Error(), "did not answer", "a closed connection is no timeout")
}
