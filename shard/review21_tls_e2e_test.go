package shard_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const r21User, r21Secret = "r21app", "r21-tls-Secret"

// requireCertFailure checks that err is a certificate verification
// failure of the kind want (found with errors.As), and neither an
// authentication failure nor a node marked down, with no password.
func requireCertFailure(t *testing.T, err error, want any) {
	t.Helper()
	require.Error(t, err)
	var cve *tls.CertificateVerificationError
	assert.True(t, errors.As(err, &cve), "error %v is not a *tls.CertificateVerificationError", err)
	assert.True(t, errors.As(err, want), "error %v does not hold a %T", err, want)
	assert.False(t, errors.Is(err, pool.ErrAuth), "a certificate failure is not an authentication failure: %v", err)
	assert.False(t, errors.Is(err, shard.ErrNodeDown), "a certificate failure is not a node down: %v", err)
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), r21Secret)
}

// A TLS-only cluster (tls-cluster yes) whose only login is an ACL user:
// sharded pub/sub connections to every master go over TLS as that user
// and deliver SPUBLISHed messages; a server name the certificates do not
// carry, or a CA the client does not trust, fails discovery with the
// certificate error (x509.HostnameError, x509.UnknownAuthorityError),
// not with an authentication failure or a node down.
func TestReview21ClusterTLSShardedPubSubAndCertErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{
		TLS:   true,
		Users: []redistest.User{{Name: r21User, Password: r21Secret}},
	})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	cfg := clusterConfig(ms[0].Addr)
	cfg.Pool.Username, cfg.Pool.Password = r21User, r21Secret
	cfg.Pool.TLSConfig = ms[0].TLS.ClientConfig()
	c := newClient(t, cfg)

	// One shard channel per master.
	var chans []string
	for i, m := range ms {
		k, _ := keyOnMaster(t, rc, m, fmt.Sprintf("r21ch%d", i))
		require.Equal(t, m.Addr, c.Router().(*shard.ClusterRouter).Table().Master(cluster.Slot(k)).Addr)
		chans = append(chans, k)
	}
	sub, err := c.SSubscribe(ctx, chans...)
	require.NoError(t, err)
	defer sub.Close()
	assert.Equal(t, 3, sub.Stats().Connections, "one TLS connection per master")
	for _, ch := range chans {
		_, err := c.Do(ctx, "SPUBLISH", ch, "m:"+ch)
		require.NoError(t, err)
	}
	got := map[string]string{}
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < len(chans) && time.Now().Before(deadline) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := sub.Receive(rctx)
		cancel()
		if err != nil {
			continue
		}
		if m, ok := v.(redis.Message); ok {
			got[m.Channel] = string(m.Data)
		}
	}
	require.Len(t, got, len(chans), "a message from every master over TLS: %v", got)
	for _, ch := range chans {
		assert.Equal(t, "m:"+ch, got[ch])
	}

	// A server name the certificates do not carry.
	wrongName := cfg
	wrongName.Pool.TLSConfig = ms[0].TLS.ClientConfig()
	wrongName.Pool.TLSConfig.ServerName = "not-this-server.example"
	_, err = shard.New(ctx, wrongName)
	var he x509.HostnameError
	requireCertFailure(t, err, &he)

	// A CA the client does not trust.
	wrongCA := cfg
	wrongCA.Pool.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: "127.0.0.1", RootCAs: x509.NewCertPool()}
	_, err = shard.New(ctx, wrongCA)
	var ue x509.UnknownAuthorityError
	requireCertFailure(t, err, &ue)
}

// TLS-only Sentinels whose only login is one ACL user, in front of
// TLS-only data nodes whose only login is another: the client logs in to
// each with its own user over TLS and routes. Swapped credentials are an
// authentication failure; a Sentinel TLS server name or CA the
// certificates do not match is a certificate failure, not an
// authentication failure, with no password in either.
func TestReview21SentinelTLSWithSeparateACLUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Sentinels")
	}
	const sentUser, sentSecret = "r21sent", "r21-sentinel-Secret"
	ctx := context.Background()
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{
		Shards:           1,
		Sentinels:        2,
		Data:             redistest.Options{TLS: true, Users: []redistest.User{{Name: r21User, Password: r21Secret}}},
		SentinelUser:     sentUser,
		SentinelPassword: sentSecret,
	})
	base := sentinelConfig(set)
	base.Pool.Username, base.Pool.Password = r21User, r21Secret
	base.Pool.TLSConfig = set.Shards[0].Nodes[0].TLS.ClientConfig()
	base.Pool.TLSConfig.ServerName = ""
	base.Sentinel.Username, base.Sentinel.Password = sentUser, sentSecret
	base.Sentinel.TLSConfig = set.Sentinels[0].TLS.ClientConfig()
	base.Sentinel.TLSConfig.ServerName = ""
	c := newClient(t, base)
	for i := range 20 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("r21s:%d", i), i)
		require.NoError(t, err)
	}
	m, err := set.Master(0)
	require.NoError(t, err)
	require.Equal(t, m.Addr, c.Stats().Sentinel[0].Master)

	// The data user cannot log in to the Sentinels.
	swapped := base
	swapped.Sentinel.Username, swapped.Sentinel.Password = r21User, r21Secret
	_, err = shard.New(ctx, swapped)
	require.Error(t, err)
	assert.True(t, errors.Is(err, pool.ErrAuth), "error %v does not match pool.ErrAuth", err)
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), r21Secret)

	// A Sentinel server name the certificates do not carry.
	wrongName := base
	wrongName.Sentinel.TLSConfig = set.Sentinels[0].TLS.ClientConfig()
	wrongName.Sentinel.TLSConfig.ServerName = "not-this-sentinel.example"
	_, err = shard.New(ctx, wrongName)
	var he x509.HostnameError
	requireCertFailure(t, err, &he)
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), sentSecret)

	// A data-node CA the client does not trust: the Sentinels answer,
	// the master's certificate fails.
	wrongCA := base
	wrongCA.Pool.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: x509.NewCertPool()}
	wc, err := shard.New(ctx, wrongCA)
	if err == nil {
		defer wc.Close()
		_, err = wc.Do(ctx, "SET", "r21s:x", 1)
	}
	var ue x509.UnknownAuthorityError
	requireCertFailure(t, err, &ue)
}

// A ring node whose certificate does not verify (a server name it does
// not carry): a command fails with the certificate error, not an
// authentication failure; once health checks mark the node down, the
// command's error matches ErrNodeDown and still holds the certificate
// error as the cause, so the caller can tell it from a node that is gone.
func TestReview21RingCertFailureStaysTheCause(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{TLS: true,
		Users: []redistest.User{{Name: r21User, Password: r21Secret}}})
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = r21User, r21Secret
	cfg.Pool.DialTimeout = 5 * time.Second
	cfg.Pool.TLSConfig = servers[0].TLS.ClientConfig()
	cfg.Pool.TLSConfig.ServerName = "not-this-server.example"
	c, err := shard.New(ctx, cfg)
	if err != nil {
		var he x509.HostnameError
		requireCertFailure(t, err, &he)
		return
	}
	t.Cleanup(func() { c.Close() })
	_, err = c.Do(ctx, "GET", "r21k")
	var he x509.HostnameError
	require.Error(t, err)
	assert.True(t, errors.As(err, &he), "error %v holds no x509.HostnameError", err)
	assert.False(t, errors.Is(err, pool.ErrAuth), "%v", err)
	var down error
	waitFor(t, 30*time.Second, "the node marked down", func() bool {
		_, down = c.Do(ctx, "GET", "r21k")
		return errors.Is(down, shard.ErrNodeDown)
	})
	var cve *tls.CertificateVerificationError
	assert.True(t, errors.As(down, &cve), "the down node's error %v lost the certificate failure", down)
	assert.False(t, errors.Is(down, pool.ErrAuth), "%v", down)
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", down, down, down), r21Secret)
}
