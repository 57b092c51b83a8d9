package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview21StringerBlockOptionBlocks: XREAD with its BLOCK option
// given as a Stringer (the server receives "BLOCK") blocks on the server
// as XREAD BLOCK does: it waits for its block time past the read
// timeout and answers nil, rather than failing with a timeout, and
// through the automatic pipeline it does not hold up another caller's
// command queued behind it on the shared connection.
func TestReview21StringerBlockOptionBlocks(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout = 300 * time.Millisecond
	const block = 1200 // ms: four read timeouts
	for _, mode := range []string{"pooled", "auto"} {
		t.Run(mode, func(t *testing.T) {
			cfg := cfg
			cfg.DisableAutoPipeline = mode == "pooled"
			c := newClient(t, cfg)
			if mode == "auto" {
				shard.AlwaysPipeline(c)
			}
			ctx := context.Background()
			_, err := c.Do(ctx, "SET", "r21blk:k", "v")
			require.NoError(t, err)
			var wg sync.WaitGroup
			var xerr error
			var xreply any
			wg.Add(1)
			go func() {
				defer wg.Done()
				xreply, xerr = c.Do(ctx, "XREAD", r21Word{"BLOCK"}, block, "STREAMS", "r21blk:s", "$")
			}()
			// Another caller, once the XREAD is blocked on the server.
			require.Eventually(t, func() bool {
				list, err := clientList(servers[0])
				if err != nil {
					return false
				}
				for _, ci := range list {
					if ci["cmd"] == "xread" {
						return true
					}
				}
				return false
			}, 20*time.Second, 5*time.Millisecond)
			var v string
			var gerr error
			for range 3 {
				v, gerr = redis.String(c.Do(ctx, "GET", "r21blk:k"))
			}
			wg.Wait()
			assert.NoError(t, gerr, "a GET behind the blocked XREAD")
			assert.Equal(t, "v", v)
			assert.NoError(t, xerr, "XREAD BLOCK %d: %v", block, fmt.Sprint(xerr))
			assert.Nil(t, xreply)
		})
	}
}
