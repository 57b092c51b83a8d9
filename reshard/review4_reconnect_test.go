package reshard_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startCutProxy starts a proxy that forwards connections to backend. The
// first time a client sends CLIENT PAUSE, onPause runs before the command
// goes on; when a client sends CLIENT UNPAUSE, the proxy stops: it closes
// its listener (new dials are refused) and every connection, that one
// last, instead of forwarding it. So the old node of a DUMP/RESTORE batch
// vanishes between the batch and its unpause, as a node that dies or a
// network that breaks.
func startCutProxy(t *testing.T, backend string, onPause func()) *redistest.Proxy {
	t.Helper()
	var paused atomic.Bool
	return redistest.StartProxy(t, backend, redistest.ProxyOptions{OnSend: func(b []byte) bool {
		chunk := bytes.ToUpper(b)
		if bytes.Contains(chunk, []byte("$7\r\nUNPAUSE\r\n")) {
			return false
		}
		if bytes.Contains(chunk, []byte("$5\r\nPAUSE\r\n")) && !paused.Swap(true) {
			onPause()
		}
		return true
	}})
}

// TestMoveReportsAnOldNodeLostBetweenBatches checks that a Move whose
// old node goes away between two DUMP/RESTORE batches fails with an
// error naming that node, rather than crash the process: the first batch
// finds its keys gone (deleted since the scan) and its CLIENT UNPAUSE
// meets a closed connection. That UNPAUSE failure ends the Move (a node
// the mover may have left paused is an error of its own), so the next
// batch's reconnection to the vanished node is not reached any more; the
// test guards the error that names the node.
func TestMoveReportsAnOldNodeLostBetweenBatches(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	keys := []string{"gone:1", "gone:2", "gone:3"}
	for _, k := range keys {
		_, err := servers[0].Do("SET", k, "v")
		require.NoError(t, err)
	}
	delErr := make(chan error, 1)
	proxy := startCutProxy(t, servers[0].Addr, func() {
		// The keys go away between the mover's scan and its DUMPs.
		c, err := redis.Dial("tcp", servers[0].Addr)
		if err == nil {
			_, err = c.Do("DEL", keys[0], keys[1], keys[2])
			c.Close()
		}
		delErr <- err
	})
	from := mustParse(t, "redis-ring://"+proxy.Addr+"?names=a")
	to := mustParse(t, ringURL(servers[1:], []string{"b"}, nil))

	_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Dump: true, Batch: 1, SkipClientCheck: true})
	require.Error(t, err)
	select {
	case err := <-delErr:
		require.NoError(t, err, "deleting the keys at the first pause")
	default:
		t.Fatal("the mover never paused the old node")
	}
	var nerr *shard.NodeError
	require.True(t, errors.As(err, &nerr), "a NodeError: %v", err)
	assert.Equal(t, proxy.Addr, nerr.Node.Addr, "it names the old node: %v", err)
	t.Logf("the error: %v", err)
}
