package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPipelineOf10kMixedCommandsKeepsOrder(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 3)
	const n = 2000 // five commands per round: 10k commands
	p := c.Pipeline()
	for i := 0; i < n; i++ {
		p.Send("SET", fmt.Sprintf("s:%d", i), i)
		p.Send("INCRBY", fmt.Sprintf("c:%d", i), i)
		p.Send("RPUSH", fmt.Sprintf("l:%d", i), "a", "b")
		p.Send("HSET", fmt.Sprintf("h:%d", i), "f", i)
		p.Send("GET", fmt.Sprintf("s:%d", i))
	}
	require.Equal(t, 5*n, p.Len())
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 5*n)
	assert.Zero(t, p.Len(), "Exec empties the queue")
	for i := 0; i < n; i++ {
		r := res[5*i : 5*i+5]
		for _, x := range r {
			require.NoError(t, x.Err)
		}
		assert.Equal(t, "OK", r[0].Reply)
		assert.Equal(t, int64(i), r[1].Reply)
		assert.Equal(t, int64(2), r[2].Reply)
		assert.Equal(t, int64(1), r[3].Reply)
		v, err := redis.Int(r[4].Reply, nil)
		require.NoError(t, err)
		assert.Equal(t, i, v, "the GET after SET of round %d", i)
	}
}

func TestPipelineSplitsMultiKeyCommands(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 3)
	p := c.Pipeline()
	p.Send("MSET", "a", "1", "b", "2", "c", "3", "d", "4")
	p.Send("MGET", "d", "c", "nope", "b", "a")
	p.Send("DEL", "a", "b", "c", "d", "nope")
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	vals, err := redis.Strings(res[1].Reply, res[1].Err)
	require.NoError(t, err)
	assert.Equal(t, []string{"4", "3", "", "2", "1"}, vals)
	assert.Equal(t, int64(4), res[2].Reply)
}

func TestEmptyPipeline(t *testing.T) {
	c, _ := startRing(t, 2)
	res, err := c.Pipeline().Exec(context.Background())
	require.NoError(t, err)
	assert.Empty(t, res)
}
