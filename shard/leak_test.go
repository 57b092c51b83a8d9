package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clientsNamed counts the connections named name on each server.
func clientsNamed(t *testing.T, servers []*redistest.Server, name string) int {
	t.Helper()
	n := 0
	for _, s := range servers {
		list, err := s.Do("CLIENT", "LIST")
		require.NoError(t, err)
		n += strings.Count(list, "name="+name+" ")
	}
	return n
}

// exercise runs single commands, pipelines and fan-out from 8 goroutines.
func exercise(t *testing.T, c *shard.Client) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			p := c.Pipeline()
			for i := 0; i < 200; i++ {
				k := fmt.Sprintf("leak:%d:%d", g, i)
				_, err := c.Do(ctx, "SET", k, i)
				assert.NoError(t, err)
				p.Send("GET", k)
			}
			_, err := p.Exec(ctx)
			assert.NoError(t, err)
			_, err = c.Do(ctx, "MGET", "leak:0:1", "leak:1:2", "leak:2:3")
			assert.NoError(t, err)
		}(g)
	}
	wg.Wait()
}

func TestNoConnectionLeaksAfterClose(t *testing.T) {
	t.Run("ring", func(t *testing.T) {
		servers := redistest.StartNTB(t, 3, redistest.Options{})
		cfg := ringConfig(servers)
		cfg.Pool.ClientName = "leakcheck-ring"
		c, err := shard.New(context.Background(), cfg)
		require.NoError(t, err)
		exercise(t, c)
		assert.Positive(t, clientsNamed(t, servers, "leakcheck-ring"))
		require.NoError(t, c.Close())
		waitFor(t, 3*time.Second, "every connection to close", func() bool {
			return clientsNamed(t, servers, "leakcheck-ring") == 0
		})
	})
	t.Run("cluster", func(t *testing.T) {
		rc := clusterForTest(t)
		cfg := clusterConfig(rc.Seeds()...)
		cfg.Pool.ClientName = "leakcheck-cluster"
		c, err := shard.New(context.Background(), cfg)
		require.NoError(t, err)
		exercise(t, c)
		require.NoError(t, c.Close())
		waitFor(t, 3*time.Second, "every connection to close", func() bool {
			return clientsNamed(t, rc.Nodes, "leakcheck-cluster") == 0
		})
	})
}
