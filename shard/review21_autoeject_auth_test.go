package shard_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// authEventLog records the NodeState events of one address.
type authEventLog struct {
	addr  string
	mu    sync.Mutex
	kinds []shard.NodeEventKind
}

func (l *authEventLog) record(ev shard.NodeEvent) {
	if ev.Node.Addr != l.addr {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kinds = append(l.kinds, ev.Kind)
}

func (l *authEventLog) count(kind shard.NodeEventKind) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, k := range l.kinds {
		if k == kind {
			n++
		}
	}
	return n
}

func (l *authEventLog) all() []shard.NodeEventKind {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.kinds)
}

// A ring shard whose server refuses the client's credentials (its ACL
// user disabled, or its password changed) is reachable: AutoEject must
// not take it out of the ring, which sent its keys to the other shards
// (a configuration error silently splitting the data set). Its commands
// fail with an error matching pool.ErrAuth. A shard that is really
// unreachable is still ejected, and one ejected so that comes back
// refusing the credentials goes back into the ring, its commands failing
// with pool.ErrAuth too.
func TestReview21AutoEjectKeepsAShardThatRefusesTheCredentials(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pass-r21"},
		{Name: "app", Password: "app-pass-r21"},
	}})
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "app", "app-pass-r21"
	cfg.Health.AutoEject = true
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

	refuse := func() {
		t.Helper()
		_, err := target.Do("ACL", "SETUSER", "app", "off")
		require.NoError(t, err)
		_, err = target.Do("CLIENT", "KILL", "USER", "app")
		require.NoError(t, err)
	}
	requireAuthRefusal := func(what string) {
		t.Helper()
		_, err := c.Do(ctx, "GET", key)
		require.Error(t, err, "%s: GET of the refusing shard's key", what)
		assert.True(t, errors.Is(err, pool.ErrAuth), "%s: GET: %v; want an error matching pool.ErrAuth", what, err)
		_, err = c.Do(ctx, "SET", key, "elsewhere")
		assert.True(t, errors.Is(err, pool.ErrAuth), "%s: SET: %v; want an error matching pool.ErrAuth", what, err)
		for i, s := range servers {
			if s == target {
				continue
			}
			n, err := s.Do("EXISTS", key)
			require.NoError(t, err)
			assert.Equal(t, "0", n, "%s: the refusing shard's key was written to shard %d", what, i)
		}
	}

	// 1. The credentials are refused: the shard is marked down (its
	// commands fail fast), not ejected.
	refuse()
	waitFor(t, 20*time.Second, "the refusing shard to be marked down", func() bool { return log.count(shard.NodeDown) >= 1 })
	assert.False(t, rr.Ejected(1), "the shard that refuses the credentials was ejected (events %v)", log.all())
	assert.Zero(t, log.count(shard.NodeEjected), "events %v", log.all())
	requireAuthRefusal("credentials refused")

	// 2. Accepted again: the shard serves.
	_, err = target.Do("ACL", "SETUSER", "app", "on")
	require.NoError(t, err)
	waitFor(t, 20*time.Second, "the shard to serve again", func() bool {
		v, err := redis.String(c.Do(ctx, "GET", key))
		return err == nil && v == "before"
	})

	// 3. A real outage still ejects the shard.
	require.NoError(t, target.Kill())
	waitFor(t, 20*time.Second, "the dead shard to be ejected", func() bool { return rr.Ejected(1) })

	// 4. It comes back refusing the credentials: it is reachable, and
	// goes back into the ring whether the health checks saw it accept
	// them for a moment or not.
	require.NoError(t, target.Restart())
	refuse()
	waitFor(t, 20*time.Second, "the shard that answers again to be back in the ring", func() bool { return !rr.Ejected(1) })
	waitFor(t, 20*time.Second, "the shard to be marked down for the credentials", func() bool {
		n := nodeStats(c, target.Addr)
		return len(n) == 1 && n[0].Down
	})
	assert.False(t, rr.Ejected(1), "events %v", log.all())
	requireAuthRefusal("back, refusing the credentials")
}
