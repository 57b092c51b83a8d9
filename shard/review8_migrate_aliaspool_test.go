package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// StartMigration asks every node its run_id (one server under two
// addresses is refused, migrate_alias.go). It asked through the client's
// pools: with a node's only connection held (MaxActive 1 with Wait, a
// Conn pinned by WATCH) and no deadline on its context, it waited for that
// connection for ever. It asks on connections of its own now.
func TestReview8StartMigrationDoesNotWaitForAFullPool(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from := ringConfig(servers[:2])
	from.Pool.MaxActive, from.Pool.Wait = 1, true
	from.DisableAutoPipeline = true
	c := newClient(t, from)
	to := ringConfig([]*redistest.Server{servers[0], servers[2]}) // servers[1] leaves
	to.Pool = from.Pool
	to.DisableAutoPipeline = true

	// Hold the only connection to each old node.
	for _, s := range servers[:2] {
		var key string
		for i := 0; key == ""; i++ {
			k := "full:" + string(rune('a'+i%26)) + string(rune('a'+i/26))
			if ringOwner(t, from, k) == s.Addr {
				key = k
			}
		}
		holder := c.Conn()
		defer holder.Close()
		_, err := holder.Do("WATCH", key)
		require.NoError(t, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.StartMigration(ctx, to) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("StartMigration waits for a connection of a full pool")
	}
}
