package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// An Exec that fails before sending anything (context already done)
// empties the queue as its godoc says: reusing the pipeline must not send
// the failed batch's commands along with the next one (an INCR would run
// twice, and the results would not line up with what was queued).
func TestPipelineExecThatSendsNothingEmptiesTheQueue(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	p := c.Pipeline()

	p.Send("INCR", "reuse:counter")
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Exec(done)
	require.True(t, errors.Is(err, context.Canceled), "Exec under a cancelled context: %v", err)
	require.Equal(t, 0, p.Len(), "the failed Exec left its commands queued")

	p.Send("INCR", "reuse:counter")
	res, err := p.Exec(context.Background())
	require.NoError(t, err)
	require.Len(t, res, 1, "Exec sent the failed batch's commands again")
	n, err := redis.Int64(res[0].Reply, res[0].Err)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the counter was incremented by the failed batch too")
}
