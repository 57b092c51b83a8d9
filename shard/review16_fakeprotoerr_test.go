package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// fakeProtoScript increments KEYS[1], then replies with an error whose
// text is that of the server's protocol error: the script ran, its write
// stays, and the connection stays open.
const fakeProtoScript = "redis.call('INCR', KEYS[1]) return redis.error_reply('ERR Protocol error: fake')"

// TestReview16TxScriptFakeProtocolErrorNotRunAgain: a script sent
// through Tx.Do writes and then replies with an error that reads like a
// protocol error. It ran: the transaction must not be run again (the
// write would run twice), whether fn returns the error or goes on; when
// fn goes on, the connection is still open and MULTI ... EXEC runs,
// instead of failing as if the server had closed it.
func TestReview16TxScriptFakeProtocolErrorNotRunAgain(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	for _, returnErr := range []bool{true, false} {
		key := "{r16fp}:tx"
		if !returnErr {
			key += ":ignored"
		}
		written := key + ":script" // not watched: the script's write aborts nothing
		attempts := 0
		_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
			attempts++
			_, err := tx.Do("EVAL", fakeProtoScript, 1, written)
			if returnErr {
				return err
			}
			return tx.Queue("INCR", key)
		})
		t.Logf("fn returns the error: %v: attempts %d, err %v", returnErr, attempts, err)
		n, gerr := redis.Int(c.Do(ctx, "GET", written))
		require.NoError(t, gerr)
		assert.Equal(t, 1, attempts, "fn run again after its script wrote")
		assert.Equal(t, 1, n, "the script's write ran twice")
		if returnErr {
			assert.Error(t, err)
		} else {
			// The connection is still open: MULTI ... EXEC runs.
			assert.NoError(t, err)
			m, gerr := redis.Int(c.Do(ctx, "GET", key))
			require.NoError(t, gerr)
			assert.Equal(t, 1, m, "the queued INCR")
		}
	}
}

// TestReview16ConnScriptFakeProtocolErrorLaterCommandsRan: on a Conn
// under WATCH, a script whose error reply reads like a protocol error is
// followed by a write in the same flush. The server ran that write (the
// connection was not closed): it must not be reported as not run.
func TestReview16ConnScriptFakeProtocolErrorLaterCommandsRan(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	for _, watch := range []bool{true, false} {
		key := "{r16fp}:conn"
		if !watch {
			key += ":plain"
		}
		conn := c.Conn()
		if watch {
			_, err := conn.Do("WATCH", key)
			require.NoError(t, err)
		}
		require.NoError(t, conn.Send("EVAL", fakeProtoScript, 1, key))
		require.NoError(t, conn.Send("INCR", key))
		require.NoError(t, conn.Flush())
		_, evalErr := conn.Receive()
		incr, incrErr := conn.Receive()
		t.Logf("watch %v: EVAL: %v; INCR: %v %v", watch, evalErr, incr, incrErr)
		assert.Error(t, evalErr, "the script's error reply")
		n, err := redis.Int(c.Do(ctx, "GET", key))
		require.NoError(t, err)
		require.Equal(t, 2, n, "the server ran the script and INCR")
		assert.NoError(t, incrErr, "INCR ran but is reported failed")
		assert.Equal(t, int64(2), incr)
		conn.Close()
	}
}

// TestReview16PipelineScriptFakeProtocolErrorLaterCommandsRan: the same
// in a Pipeline.
func TestReview16PipelineScriptFakeProtocolErrorLaterCommandsRan(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	const key = "{r16fp}:pipe"
	p := c.Pipeline()
	p.Send("EVAL", fakeProtoScript, 1, key)
	p.Send("INCR", key)
	res, err := p.Exec(ctx)
	t.Logf("results %+v, err %v", res, err)
	n, gerr := redis.Int(c.Do(ctx, "GET", key))
	require.NoError(t, gerr)
	require.Equal(t, 2, n, "the server ran the script and INCR")
	require.Len(t, res, 2)
	assert.Error(t, res[0].Err)
	assert.NoError(t, res[1].Err, "INCR ran but is reported failed")
	assert.Equal(t, int64(2), res[1].Reply)
}
