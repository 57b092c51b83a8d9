package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Sentinel shard that gives its own Sentinel password, under a
// SentinelOptions.TLSConfig shared by all shards, still reaches its
// Sentinels over TLS: the shared TLSConfig applies to every shard without
// a TLSConfig of its own, as its godoc says. The shard's own credentials
// used to drop it, so the client dialed those Sentinels in plain text
// (sending AUTH in the clear) and, against TLS-only Sentinels, could not
// start.
func TestSentinelShardWithItsOwnPasswordKeepsTheSharedTLS(t *testing.T) {
	_, cfg := startTLSSentinels(t)
	require.Len(t, cfg.Sentinel.Shards, 2)
	cfg.Sentinel.Shards[0].Password = sentPW // its own credentials, no TLSConfig of its own
	c := newClient(t, cfg)
	ctx := context.Background()
	for i := range 50 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("shardtls:%d", i), i)
		require.NoError(t, err)
	}
}
