package shard_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/url"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// Both topologies of a migration are reached with the client's pool
// options. A From (or a run-time new topology) that asks for TLS while the
// client's options do not would be dialed in plain text, silently: it is
// refused as a bad config instead.
func TestMigrationRefusesATopologyWhoseTLSWouldBeDropped(t *testing.T) {
	u := "redis-ring://127.0.0.1:6380?from=" + url.QueryEscape("rediss-ring://127.0.0.1:6379")
	_, err := shard.ParseURL(u)
	require.True(t, errors.Is(err, shard.ErrBadConfig), "ParseURL(%q): %v; want ErrBadConfig", u, err)

	from := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:6379", Weight: 1}}}
	from.Pool.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	cfg := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:6380", Weight: 1}}, Migration: &shard.Migration{From: &from}}
	require.ErrorIs(t, cfg.Validate(), shard.ErrBadConfig)
	cfg.Pool.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12} // the client's own TLS: accepted
	require.NoError(t, cfg.Validate())

	servers := redistest.StartNTB(t, 2, redistest.Options{})
	c := newClient(t, ringConfig(servers[:1]))
	to := ringConfig(servers)
	to.Pool.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	err = c.StartMigration(context.Background(), to)
	require.True(t, errors.Is(err, shard.ErrBadConfig), "StartMigration to a TLS topology from a plain client: %v", err)
	_, on := c.Migration()
	require.False(t, on)
}
