package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestMigrationScanStrayCopyDoesNotHideTheKey: during a migration a Scan
// remembers the keys it has reported across nodes. A stray copy of a key
// on a node that owns it in neither topology (left by a manual copy, or by
// auto-eject before the migration) is skipped; it must not count as the
// key seen, or the owner's copy walked later would be left out.
func TestMigrationScanStrayCopyDoesNotHideTheKey(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	owner := servers[2].Addr
	var key string
	for i := 0; ; i++ {
		key = fmt.Sprintf("stray:%d", i)
		if ringOwner(t, from, key) == owner && ringOwner(t, to, key) == owner {
			break
		}
	}
	for _, s := range servers {
		v := "stray"
		if s.Addr == owner {
			v = "real"
		}
		_, err := s.Do("SET", key, v)
		require.NoError(t, err)
	}
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)
	var got []string
	s := c.Scan(shard.ScanOptions{})
	for s.Next(ctx) {
		got = append(got, s.Key())
	}
	require.NoError(t, s.Err())
	require.Equal(t, []string{key}, got, "the key, reported once, from its owner")
}
