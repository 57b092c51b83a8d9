package shard_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A cluster whose nodes accept TLS only (tls-cluster yes), with an ACL
// user: the client reaches every slot's master and replica over TLS
// with verified certificates; without TLS, with a CA it does not
// trust, or with a wrong password it fails with the matching cause and
// never shows the password.
func TestReview6ClusterTLSEndToEnd(t *testing.T) {
	const secret = "cluster-tls-Secret"
	ctx := context.Background()
	cl := redistest.StartClusterTB(t, 3, 1, redistest.Options{
		TLS:   true,
		Users: []redistest.User{{Name: "app", Password: secret}},
	})
	seeds := []string{cl.Nodes[0].Addr, cl.Nodes[1].Addr}
	cfg := clusterConfig(seeds...)
	cfg.Pool.Username, cfg.Pool.Password = "app", secret
	cfg.Pool.TLSConfig = cl.Nodes[0].TLS.ClientConfig()
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	c := newClient(t, cfg)

	const n = 200
	args := make([]any, 0, 2*n)
	for i := 0; i < n; i++ {
		args = append(args, fmt.Sprintf("ctls:%d", i), i)
	}
	_, err := c.Do(ctx, "MSET", args...)
	require.NoError(t, err)
	for i := 0; i < n; i += 37 {
		v, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("ctls:%d", i)))
		if err == nil {
			assert.Equal(t, i, v)
		} else {
			// A replica may lag the write by a moment: only a
			// value that is there must be right.
			t.Logf("replica read of ctls:%d: %v", i, err)
		}
	}
	// Every node, masters and replicas, answers over TLS.
	var seen atomic.Int32
	require.NoError(t, c.ForEachNode(ctx, func(ctx context.Context, node shard.Node, conn redis.Conn) error {
		seen.Add(1)
		_, err := redis.String(conn.Do("PING"))
		return err
	}))
	require.Equal(t, int32(len(cl.Nodes)), seen.Load(), "ForEachNode reaches every node")

	// Without TLS the TLS-only nodes cannot be discovered.
	plain := clusterConfig(seeds...)
	plain.Pool.Username, plain.Pool.Password = "app", secret
	_, err = shard.New(ctx, plain)
	require.Error(t, err, "a client without TLS reached TLS-only nodes")
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), secret)

	// A CA the client does not trust: the certificate check fails, and
	// says so.
	untrusted := clusterConfig(seeds...)
	untrusted.Pool.Username, untrusted.Pool.Password = "app", secret
	untrusted.Pool.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: "127.0.0.1", RootCAs: x509.NewCertPool()}
	_, err = shard.New(ctx, untrusted)
	require.Error(t, err, "a client accepted a certificate of an unknown authority")
	var cve *tls.CertificateVerificationError
	assert.True(t, errors.As(err, &cve), "error %v is not a *tls.CertificateVerificationError", err)
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), secret)

	// A wrong password over TLS is an authentication failure.
	wrong := cfg
	wrong.Pool.Password = "not-" + secret
	_, err = shard.New(ctx, wrong)
	require.Error(t, err)
	assert.True(t, errors.Is(err, pool.ErrAuth), "error %v does not match pool.ErrAuth", err)
	assert.False(t, strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), "not-"+secret), "error shows the password: %v", err)
}
