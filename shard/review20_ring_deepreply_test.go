package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nestedDepth returns how many one-element arrays wrap v, and whether
// the innermost value is the integer 1.
func nestedDepth(v any) (int, bool) {
	d := 0
	for {
		a, ok := v.([]any)
		if !ok {
			n, ok := v.(int64)
			return d, ok && n == 1
		}
		if len(a) != 1 {
			return d, false
		}
		v = a[0]
		d++
	}
}

// A Lua script may return tables nested thousands deep, and Redis sends
// them as nested arrays (7.0 sends up to about 8000 levels, its Lua stack
// limit). Such a reply is valid RESP: it was refused as a protocol error
// past 64 levels, the connection dropped, the call reported as of unknown
// outcome, and three such calls marked a healthy shard down, failing
// every key it serves.
func TestReview20RingDeeplyNestedScriptReplyIsRead(t *testing.T) {
	const script = "local t = {1} for i = 1, ARGV[1] do t = {t} end return t"
	ways := []struct {
		name string
		auto bool
		run  func(c *shard.Client, depth int) (any, error)
	}{
		{"DoKey", false, func(c *shard.Client, depth int) (any, error) {
			return c.DoKey(context.Background(), "k", "EVAL", script, 0, depth)
		}},
		{"auto-pipelined DoKey", true, func(c *shard.Client, depth int) (any, error) {
			return c.DoKey(context.Background(), "k", "EVAL", script, 0, depth)
		}},
		{"Pipeline", false, func(c *shard.Client, depth int) (any, error) {
			p := c.Pipeline()
			p.SendKey("k", "EVAL", script, 0, depth)
			p.Send("SET", "k", "v")
			res, err := p.Exec(context.Background())
			if err != nil {
				return nil, err
			}
			if len(res) != 2 {
				return nil, fmt.Errorf("%d results for 2 commands", len(res))
			}
			if res[1].Err != nil {
				return nil, res[1].Err
			}
			return res[0].Reply, res[0].Err
		}},
		{"Conn", false, func(c *shard.Client, depth int) (any, error) {
			conn := c.Conn()
			defer conn.Close()
			return conn.Do("EVAL", script, 1, "k", depth)
		}},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			servers := redistest.StartNTB(t, 1, redistest.Options{})
			c := newClient(t, ringConfig(servers))
			if w.auto {
				shard.AlwaysPipeline(c)
			}
			for _, depth := range []int{65, 1000, 7000, 7000, 7000, 7000} {
				v, err := w.run(c, depth)
				require.NoError(t, err, "depth %d", depth)
				got, clean := nestedDepth(v)
				assert.Equal(t, depth+1, got, "levels of nesting")
				assert.True(t, clean, "the innermost value")
			}
			_, err := c.Do(context.Background(), "SET", "k", "v")
			require.NoError(t, err, "the shard serves")
			for _, n := range c.Stats().Nodes {
				assert.False(t, n.Down, "%s marked down by valid replies", n.Node.Name)
				assert.Zero(t, n.Errors, "%s counted failures for valid replies", n.Node.Name)
			}
		})
	}
}
