package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ring shard whose health check its server refuses by ACL (the
// client's user lacks +info, and the check is CheckReplication, which
// reads INFO replication) is reachable and misconfigured, not gone: it is
// marked down, its commands saying why (NOPERM), but AutoEject must not
// send its keys to the other shards. Once the ACL allows the check, it
// serves again.
func TestReview21AutoEjectKeepsAShardWhoseCheckTheACLRefuses(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{Users: []redistest.User{
		{Name: "app", Password: "app-pass-r21n"},
	}})
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "app", "app-pass-r21n"
	cfg.Health.AutoEject = true
	cfg.Health.Check = shard.CheckReplication
	target := servers[1]
	log := &authEventLog{addr: target.Addr}
	cfg.Hooks = &shard.Hooks{NodeState: log.record}
	c := newClient(t, cfg)
	rr, ok := c.Router().(*shard.RingRouter)
	require.True(t, ok)
	ctx := context.Background()
	key := keysByShard(t, c, 1)[target.Addr][0]
	_, err := c.Do(ctx, "SET", key, "before")
	require.NoError(t, err)

	_, err = target.Do("ACL", "SETUSER", "app", "-info")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the shard whose check is refused to be marked down", func() bool { return log.count(shard.NodeDown) >= 1 })
	assert.False(t, rr.Ejected(1), "the shard whose health check the ACL refuses was ejected (events %v)", log.all())
	assert.Zero(t, log.count(shard.NodeEjected), "events %v", log.all())
	_, err = c.Do(ctx, "SET", key, "elsewhere")
	require.Error(t, err, "SET of the down shard's key")
	assert.ErrorIs(t, err, shard.ErrNodeDown)
	assert.True(t, strings.Contains(err.Error(), "NOPERM"), "the error names the refusal: %v", err)
	for i, s := range servers {
		if s == target {
			continue
		}
		n, err := s.Do("EXISTS", key)
		require.NoError(t, err)
		assert.Equal(t, "0", n, "the down shard's key was written to shard %d", i)
	}

	_, err = target.Do("ACL", "SETUSER", "app", "+info")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the shard to serve again", func() bool {
		_, err := c.Do(ctx, "SET", key, "after")
		return err == nil
	})
	v, err := target.Do("GET", key)
	require.NoError(t, err)
	assert.Equal(t, "after", v)
}
