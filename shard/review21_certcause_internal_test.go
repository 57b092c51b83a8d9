package shard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/stretchr/testify/require"
)

// TestReview21TimeoutKeepsACertificateFailureAsTheCause: a node down
// because its certificate does not verify keeps that failure as the
// cause of its commands' errors when a later health check merely times
// out (a slow handshake on a loaded host), as an authentication failure
// is kept: the caller must go on learning that the certificate is
// wrong, not that the node is slow.
func TestReview21TimeoutKeepsACertificateFailureAsTheCause(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{TLS: true})
	tc := server.TLS.ClientConfig()
	tc.ServerName = "not-this-server.example"
	c, err := New(context.Background(), Config{
		Shards: []ring.Shard{{Name: "s0", Addr: server.Addr, Weight: 1}},
		Pool:   pool.Options{DialTimeout: 5 * time.Second, TLSConfig: tc},
		Health: HealthOptions{Interval: time.Hour, FailureLimit: 1, Timeout: time.Second},
	})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.Do(context.Background(), "GET", "k")
	var cve *tls.CertificateVerificationError
	require.ErrorAs(t, err, &cve, "the command's own failure")
	i, ok := c.nodes.lookup(server.Addr)
	require.True(t, ok)
	ns := c.nodes.get(i)
	ns.trans.Lock()
	ns.noteCause(err)
	ns.down.Store(true)
	ns.noteCause(fmt.Errorf("health check: %w", context.DeadlineExceeded))
	ns.trans.Unlock()

	down := ns.downErr()
	require.ErrorIs(t, down, ErrNodeDown)
	require.True(t, errors.As(down, &cve), "a timeout replaced the certificate failure: %v", down)
}
