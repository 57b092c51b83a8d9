package shard_test

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ring shard whose server's certificate fails verification (signed by
// another authority than the client trusts) is reachable and
// misconfigured, as one refusing the credentials is: AutoEject must not
// send its keys to the other shards. It is marked down, its commands
// failing with the certificate error.
func TestReview21AutoEjectKeepsAShardWhoseCertificateFails(t *testing.T) {
	trusted := redistest.StartNTB(t, 2, redistest.Options{TLS: true})
	other := redistest.StartNTB(t, 1, redistest.Options{TLS: true}) // its own authority
	cfg := shard.Config{Shards: []ring.Shard{
		{Name: "s0", Addr: trusted[0].Addr, Weight: 1},
		{Name: "s1", Addr: other[0].Addr, Weight: 1},
		{Name: "s2", Addr: trusted[1].Addr, Weight: 1},
	}}
	cfg.Pool.TLSConfig = trusted[0].TLS.ClientConfig()
	cfg.Health.AutoEject = true
	target := other[0]
	log := &authEventLog{addr: target.Addr}
	cfg.Hooks = &shard.Hooks{NodeState: log.record}
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	rr, ok := c.Router().(*shard.RingRouter)
	require.True(t, ok)
	key := ""
	for i := 0; key == "" && i < 10000; i++ {
		k := "r21cert:" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))
		n, err := rr.Route(k)
		require.NoError(t, err)
		if n.Addr == target.Addr {
			key = k
		}
	}
	require.NotEmpty(t, key, "no key of the shard with the foreign certificate")

	waitFor(t, 30*time.Second, "the shard with the foreign certificate to be marked down", func() bool { return log.count(shard.NodeDown) >= 1 })
	assert.False(t, rr.Ejected(1), "the shard whose certificate fails was ejected (events %v)", log.all())
	assert.Zero(t, log.count(shard.NodeEjected), "events %v", log.all())
	_, err = c.Do(ctx, "SET", key, "elsewhere")
	require.Error(t, err, "SET of the key of the shard whose certificate fails")
	var cve *tls.CertificateVerificationError
	assert.True(t, errors.As(err, &cve), "error %v holds no certificate failure", err)
	for i, s := range trusted {
		n, err := s.Do("EXISTS", key)
		require.NoError(t, err)
		assert.Equal(t, "0", n, "the key was written to trusted shard %d", i)
	}
}
