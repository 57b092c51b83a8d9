package shard_test

import (
	"errors"
	"net"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview8UnspecifiedAddressIsTheLoopbackServer: a shard at
// 0.0.0.0:PORT reaches the server at 127.0.0.1:PORT (checked here against a
// real server), so a config naming both is one server twice, refused like
// localhost next to 127.0.0.1.
func TestReview8UnspecifiedAddressIsTheLoopbackServer(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	_, port, err := net.SplitHostPort(server.Addr)
	require.NoError(t, err)

	// The premise: a connection to 0.0.0.0 goes to the loopback server.
	conn, err := redis.Dial("tcp", net.JoinHostPort("0.0.0.0", port))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Do("SET", "review8:unspecified", "here")
	require.NoError(t, err)
	direct, err := redis.Dial("tcp", server.Addr)
	require.NoError(t, err)
	defer direct.Close()
	v, err := redis.String(direct.Do("GET", "review8:unspecified"))
	require.NoError(t, err)
	require.Equal(t, "here", v)

	cfg := shard.Config{Shards: []ring.Shard{
		{Name: "a", Addr: net.JoinHostPort("0.0.0.0", port), Weight: 1},
		{Name: "b", Addr: server.Addr, Weight: 1},
	}}
	_, err = shard.ParseConfig([]byte("shards: [{addr: '0.0.0.0:" + port + "'}, {addr: '" + server.Addr + "'}]\n"))
	require.True(t, errors.Is(err, shard.ErrBadConfig) && errors.Is(err, ring.ErrDuplicateShard), "ParseConfig: %v", err)
	require.Contains(t, err.Error(), "are the same server")
	_, err = shard.New(t.Context(), cfg)
	require.True(t, errors.Is(err, shard.ErrBadConfig) && errors.Is(err, ring.ErrDuplicateShard), "New: %v", err)
}
