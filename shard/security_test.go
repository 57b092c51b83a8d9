package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const secret = "s3cret-Pa55word"

func TestACLAuthEndToEnd(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{
		Users: []redistest.User{{Name: "app", Password: secret, Rules: "~* &* +@all"}},
	})
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "app", secret
	c := newClient(t, cfg)
	for i := 0; i < 50; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("acl:%d", i), i)
		require.NoError(t, err)
	}
	who, err := redis.String(c.DoKey(ctx, "acl:1", "ACL", "WHOAMI"))
	require.NoError(t, err)
	assert.Equal(t, "app", who)
	assert.NotContains(t, cfg.String(), secret)
	assert.NotContains(t, fmt.Sprintf("%v %+v", cfg, cfg), secret)

	// A wrong password gives a clear error that does not echo it.
	bad := ringConfig(servers)
	bad.Pool.Username, bad.Pool.Password = "app", "wrong-"+secret
	bc := newClient(t, bad)
	_, err = bc.Do(ctx, "GET", "acl:1")
	require.Error(t, err)
	var ae *pool.AuthError
	assert.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, pool.ErrAuth)
	var ne *shard.NodeError
	assert.ErrorAs(t, err, &ne)
	assert.NotContains(t, err.Error(), secret)
	assert.Contains(t, err.Error(), "WRONGPASS")
}

func TestURLCarriesCredentialsWithoutLeakingThem(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{
		Users: []redistest.User{{Name: "app", Password: secret, Rules: "~* &* +@all"}},
	})
	url := fmt.Sprintf("redis-ring://app:%s@%s,%s?hash=jedis&tag=none&names=a,b", secret, servers[0].Addr, servers[1].Addr)
	cfg, err := shard.ParseURL(url)
	require.NoError(t, err)
	assert.NotContains(t, cfg.String(), secret)
	c := newClient(t, cfg)
	_, err = c.Do(ctx, "SET", "u", "1")
	require.NoError(t, err)

	_, err = shard.ParseURL(fmt.Sprintf("redis-ring://app:%s@%s?bogus=1", secret, servers[0].Addr))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)
}

func TestTLSEndToEnd(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{TLS: true})
	cfg := ringConfig(servers)
	cfg.Pool.TLSConfig = servers[0].TLS.ClientConfig()
	c := newClient(t, cfg)
	for i := 0; i < 50; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("tls:%d", i), i)
		require.NoError(t, err)
	}
	v, err := redis.Int(c.Do(ctx, "GET", "tls:7"))
	require.NoError(t, err)
	assert.Equal(t, 7, v)

	// Without TLS the same servers refuse us, with an error that names the node.
	plain := newClient(t, ringConfig(servers))
	_, err = plain.Do(ctx, "GET", "tls:7")
	var ne *shard.NodeError
	assert.True(t, errors.As(err, &ne), "%v", err)
}
