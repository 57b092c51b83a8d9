package shard_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// lookalikeScript replies with an error whose text is that of the
// server's protocol error, and leaves the connection open: the commands
// written after it on the connection run.
const lookalikeScript = "return redis.error_reply('ERR Protocol error: fake')"

// TestReview17AutoPipelineLookalikeProtocolErrorNoDoubleWrite: callers
// sharing a cluster node's automatic pipeline INCR one counter while
// another caller runs a script whose error reply reads like a protocol
// error. The server ran the INCRs written after the script on the same
// connection: none may be reported as not run (the cluster client would
// send it again and count it twice), so the counter must equal the number
// of INCRs acknowledged, and every INCR must succeed.
func TestReview17AutoPipelineLookalikeProtocolErrorNoDoubleWrite(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	c := newClient(t, clusterConfig(rc.Seeds()...))
	shard.AlwaysPipeline(c)
	const counter = "{r17la}:n"
	_, err := c.Do(ctx, "DEL", counter)
	require.NoError(t, err)

	const incrers, evals = 12, 300
	var (
		acked, failed atomic.Int64
		firstErr      atomic.Value
		stop          = make(chan struct{})
		wg            sync.WaitGroup
	)
	for range incrers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Do(ctx, "INCR", counter); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				acked.Add(1)
			}
		}()
	}
	scriptErrs := 0
	var other error
	for range evals {
		_, err := c.Do(ctx, "EVAL", lookalikeScript, 1, "{r17la}:s")
		var re redis.Error
		if errors.As(err, &re) {
			scriptErrs++
		} else {
			other = err
		}
	}
	close(stop)
	wg.Wait()

	n, err := redis.Int64(c.Do(ctx, "GET", counter))
	require.NoError(t, err)
	t.Logf("INCRs acknowledged %d, failed %d (first: %v), counter %d; script error replies %d of %d", acked.Load(), failed.Load(), firstErr.Load(), n, scriptErrs, evals)
	assert.Equal(t, evals, scriptErrs, "the script's own error reply, got %v", other)
	assert.Zero(t, failed.Load(), "INCRs failed next to a script's error reply")
	assert.Equal(t, acked.Load(), n, "the counter differs from the INCRs acknowledged: an INCR ran twice or ran unacknowledged")
}
