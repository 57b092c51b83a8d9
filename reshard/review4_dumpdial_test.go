package reshard_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDumpMoveDoesNotPauseWhileDialingTheNewNode checks that the
// DUMP/RESTORE path does not hold the old node's writes paused (CLIENT
// PAUSE WRITE) while it connects to a new node that does not answer: the
// application's writes to the old node would wait for a dial and
// handshake timeout. The new node stops answering once the mover has
// begun scanning; while the mover's dial hangs, a write to the old node
// must go through.
func TestDumpMoveDoesNotPauseWhileDialingTheNewNode(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	for _, k := range []string{"a", "b", "c"} {
		_, err := servers[0].Do("SET", k, "v")
		require.NoError(t, err)
	}
	// Once trapped (CutAndHold), the new node stops answering.
	dst := redistest.StartProxy(t, servers[1].Addr, redistest.ProxyOptions{})
	src := redistest.StartProxy(t, servers[0].Addr, redistest.ProxyOptions{OnSend: func(b []byte) bool {
		if bytes.Contains(bytes.ToUpper(b), []byte("$4\r\nSCAN\r\n")) {
			dst.CutAndHold() // the mover has armed and begins to move
		}
		return true
	}})
	from := mustParse(t, "redis-ring://"+src.Addr+"?names=a")
	to := mustParse(t, "redis-ring://"+dst.Addr+"?names=b&read_timeout=20s&dial_timeout=20s")

	done := make(chan error, 1)
	go func() {
		_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Dump: true, SkipClientCheck: true})
		done <- err
	}()
	select {
	case <-dst.Held():
	case err := <-done:
		t.Fatalf("the mover ended before it dialled the new node again: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the mover did not dial the new node within 60s")
	}
	// The mover is connecting to the new node now. A write to the old one:
	conn, err := redis.Dial("tcp", servers[0].Addr, redis.DialReadTimeout(5*time.Second))
	require.NoError(t, err)
	_, werr := conn.Do("SET", "app", "write")
	conn.Close()
	dst.Release()
	err = <-done
	assert.NoError(t, werr, "a write to the old node while the mover connects to the new one")
	var nerr *shard.NodeError
	require.True(t, errors.As(err, &nerr), "a NodeError: %v", err)
	assert.Equal(t, dst.Addr, nerr.Node.Addr, "it names the new node: %v", err)
}
