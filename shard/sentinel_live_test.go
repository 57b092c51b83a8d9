package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Credentials of the Sentinel tests: the data nodes' ACL user and the
// Sentinels' own password are different secrets.
const (
	sentDataUser = "app"
	sentDataPW   = "data-secret-1"
	sentPW       = "sentinel-secret-2"
)

// startSentinelSet starts 3 shards × (1 master + 1 replica) + 3 Sentinels
// with authentication on both sides.
func startSentinelSet(t *testing.T) *redistest.SentinelSet {
	t.Helper()
	return redistest.StartSentinelsTB(t, sentinelSetOptions(3))
}

// sentinelSetOptions are startSentinelSet's options with the given number
// of shards.
func sentinelSetOptions(shards int) redistest.SentinelOptions {
	return redistest.SentinelOptions{
		Data:             redistest.Options{Users: []redistest.User{{Name: sentDataUser, Password: sentDataPW}}},
		SentinelPassword: sentPW,
		DownAfter:        time.Second,
		FailoverTimeout:  2 * time.Second,
		Shards:           shards,
	}
}

// swapRoles promotes next and makes old, its master, replicate from it,
// behind the Sentinels' backs (a failover the client must find out by
// itself, from READONLY); it returns once old replicates from next.
func swapRoles(t *testing.T, old, next *redistest.Server) {
	t.Helper()
	_, err := next.Do("REPLICAOF", "NO", "ONE")
	require.NoError(t, err)
	_, err = old.Do("REPLICAOF", "127.0.0.1", fmt.Sprint(next.Port))
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the old master to replicate from the new one", func() bool {
		info, err := old.Do("INFO", "replication")
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
}

// loneSentinel starts one shard (a master and its replica) watched by a
// single Sentinel, and returns it with its sentinelConfig with the
// periodic Sentinel queries off: once that Sentinel is killed, only what
// the data nodes answer can tell the client of a failover.
func loneSentinel(t *testing.T) (*redistest.SentinelSet, shard.Config) {
	t.Helper()
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	cfg := sentinelConfig(set)
	cfg.Sentinel.RefreshInterval = -1
	return set, cfg
}

// unseenFailover kills the Sentinel of a loneSentinel set and swaps the
// roles of its master and replica (swapRoles): a failover the client can
// learn of only from the READONLY replies of the demoted master. It
// returns the demoted master and the promoted replica.
func unseenFailover(t *testing.T, set *redistest.SentinelSet) (old, next *redistest.Server) {
	t.Helper()
	require.Len(t, set.Sentinels, 1)
	require.NoError(t, set.Sentinels[0].Kill())
	old, err := set.Master(0)
	require.NoError(t, err)
	next, err = set.Replica(0)
	require.NoError(t, err)
	swapRoles(t, old, next)
	return old, next
}

// sentinelConfig is a ring of the set's shards named shard-0.. by Sentinel.
func sentinelConfig(set *redistest.SentinelSet) shard.Config {
	cfg := shard.Config{
		Pool: pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
			Username: sentDataUser, Password: sentDataPW, ClientName: "sentinel-test"},
		Health:   shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Password: sentPW, Timeout: 500 * time.Millisecond},
	}
	for i, name := range set.Names() {
		n := fmt.Sprintf("shard-%d", i)
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: n, Weight: 1})
		cfg.Sentinel.Shards = append(cfg.Sentinel.Shards, shard.SentinelShard{Name: n, MasterName: name})
	}
	return cfg
}

// plainTwin is the plain ring with the same names over the current masters.
func plainTwin(t *testing.T, set *redistest.SentinelSet) (*ring.Ring, []*redistest.Server) {
	t.Helper()
	var shards []ring.Shard
	var masters []*redistest.Server
	for i := range set.Shards {
		m, err := set.Master(i)
		require.NoError(t, err)
		masters = append(masters, m)
		shards = append(shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: m.Addr, Weight: 1})
	}
	r, err := ring.New(ring.Config{Shards: shards})
	require.NoError(t, err)
	return r, masters
}

func TestSentinelRoutingMatchesPlainRing(t *testing.T) {
	set := startSentinelSet(t)
	c, err := shard.New(context.Background(), sentinelConfig(set))
	require.NoError(t, err)
	defer c.Close()
	plain, masters := plainTwin(t, set)
	ctx := context.Background()
	const n = 600
	p := c.Pipeline()
	for i := range n {
		p.Send("SET", fmt.Sprintf("route:%d", i), i)
	}
	out, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, out, n)
	perShard := make([]int, len(masters))
	for i := range n {
		require.NoError(t, out[i].Err)
		k := fmt.Sprintf("route:%d", i)
		want := plain.Locate(k)
		perShard[want]++
		node, err := c.Router().Route(k)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("shard-%d", want), node.Name, k)
		// The key is on the master the plain ring names, and only there.
		for j, m := range masters {
			got, err := m.Do("EXISTS", k)
			require.NoError(t, err)
			assert.Equal(t, map[bool]string{true: "1", false: "0"}[j == want], got, "%s on shard %d", k, j)
		}
	}
	for i, cnt := range perShard {
		assert.Greater(t, cnt, n/6, "shard %d gets its share", i)
	}
	// ForEachShard, Scan and Tx reach the shards' current masters too.
	var total int64
	var mu sync.Mutex
	require.NoError(t, c.ForEachShard(ctx, func(ctx context.Context, node shard.Node, conn redis.Conn) error {
		n, err := redis.Int64(conn.Do("DBSIZE"))
		mu.Lock()
		total += n
		mu.Unlock()
		return err
	}))
	assert.Equal(t, int64(n), total)
	scanned := 0
	for sc := c.Scan(shard.ScanOptions{Match: "route:*"}); sc.Next(ctx); {
		scanned++
	}
	assert.Equal(t, n, scanned)
	replies, err := c.Tx(ctx, []string{"route:1"}, func(tx *shard.Tx) error {
		v, err := redis.Int(tx.Do("GET", "route:1"))
		if err != nil {
			return err
		}
		return tx.Queue("SET", "route:1", v+100)
	})
	require.NoError(t, err)
	require.Len(t, replies, 1)
	got, err := masters[plain.Locate("route:1")].Do("GET", "route:1")
	require.NoError(t, err)
	assert.Equal(t, "101", got)

	st := c.Stats()
	require.Len(t, st.Sentinel, 3)
	for i, s := range st.Sentinel {
		assert.Equal(t, masters[i].Addr, s.Master)
		assert.False(t, s.Stale)
		assert.Zero(t, s.Failovers)
	}
	waitFor(t, 30*time.Second, "subscriptions", func() bool {
		for _, s := range c.Stats().Sentinel {
			if s.Subscribed != 3 {
				return false
			}
		}
		return true
	})

	// The three shards share their Sentinels, so they share one
	// subscription per Sentinel.
	for _, s := range set.Sentinels {
		list, err := s.Do("CLIENT", "LIST")
		require.NoError(t, err)
		assert.Equal(t, 1, strings.Count(list, " sub=1 "), "subscriptions on %s:\n%s", s.Addr, list)
	}

	// Close leaves no connection behind: none to the data nodes (they
	// carry the client name), no subscription on the Sentinels.
	require.NoError(t, c.Close())
	var data []*redistest.Server
	for _, sh := range set.Shards {
		data = append(data, sh.Nodes...)
	}
	waitFor(t, 20*time.Second, "connections to close", func() bool {
		if clientsNamed(t, data, "sentinel-test") != 0 {
			return false
		}
		for _, s := range set.Sentinels {
			list, err := s.Do("CLIENT", "LIST")
			require.NoError(t, err)
			if strings.Contains(list, "cmd=subscribe") || strings.Contains(list, "cmd=ping") && strings.Contains(list, "sub=1") {
				return false
			}
		}
		return true
	})
}

func TestSentinelAuthErrors(t *testing.T) {
	set := startSentinelSet(t)
	cfg := sentinelConfig(set)
	cfg.Sentinel.Password = "not-the-password"
	_, err := shard.New(context.Background(), cfg)
	require.Error(t, err)
	assert.ErrorIs(t, err, sentinel.ErrNoSentinel)
	assert.NotContains(t, err.Error(), "not-the-password")
	assert.NotContains(t, err.Error(), sentPW)

	// The Sentinels answer but the data nodes refuse the data password:
	// ROLE cannot confirm the master.
	cfg = sentinelConfig(set)
	cfg.Pool.Password = "wrong-data-pw"
	_, err = shard.New(context.Background(), cfg)
	require.Error(t, err)
	assert.ErrorIs(t, err, pool.ErrAuth)
	assert.NotContains(t, err.Error(), "wrong-data-pw")
}

func TestSentinelDiscoveryWhenSentinelsDie(t *testing.T) {
	set := startSentinelSet(t)
	cfg := sentinelConfig(set)
	cfg.Sentinel.RefreshInterval = 200 * time.Millisecond
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "sd:a", "1")
	require.NoError(t, err)

	// One Sentinel killed: a failover is still followed through the others.
	require.NoError(t, set.Sentinels[0].Kill())
	old, err := set.Master(0)
	require.NoError(t, err)
	next, err := set.Replica(0)
	require.NoError(t, err)
	waitFor(t, 60*time.Second, "a manual failover to be accepted", func() bool {
		_, err := set.Sentinels[1].Do("SENTINEL", "FAILOVER", set.Shards[0].Name)
		return err == nil
	})
	waitFor(t, 60*time.Second, "the client to follow the failover", func() bool {
		return c.Stats().Sentinel[0].Master == next.Addr
	})
	assert.NotEqual(t, old.Addr, next.Addr)
	for i := range 50 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("sd:%d", i), i)
		require.NoError(t, err)
	}

	// All Sentinels down: the ring keeps serving from the last known
	// masters and says so.
	for _, s := range set.Sentinels[1:] {
		require.NoError(t, s.Kill())
	}
	waitFor(t, 30*time.Second, "stats to show stale shards", func() bool {
		for _, s := range c.Stats().Sentinel {
			if !s.Stale || s.Subscribed != 0 || s.LastError == "" {
				return false
			}
		}
		return true
	})
	for i := range 100 {
		k := fmt.Sprintf("sd:after:%d", i)
		_, err := c.Do(ctx, "SET", k, i)
		require.NoError(t, err)
		v, err := redis.Int(c.Do(ctx, "GET", k))
		require.NoError(t, err)
		assert.Equal(t, i, v)
	}
	for _, s := range c.Stats().Sentinel {
		assert.NotContains(t, s.LastError, sentPW)
	}
	// A Sentinel back: the shards are fresh again.
	require.NoError(t, set.Sentinels[1].Restart())
	waitFor(t, 60*time.Second, "stats to recover and the subscriptions to come back", func() bool {
		for _, s := range c.Stats().Sentinel {
			if s.Stale || s.Subscribed != 1 {
				return false
			}
		}
		return true
	})
}

func TestSentinelReplicaReads(t *testing.T) {
	set := startSentinelSet(t)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	c := newClient(t, cfg)
	ctx := context.Background()
	st := c.Stats()
	require.Len(t, st.Sentinel, 3)
	replicas := map[string]bool{}
	for i, s := range st.Sentinel {
		r, err := set.Replica(i)
		require.NoError(t, err)
		assert.Equal(t, []string{r.Addr}, s.Replicas)
		replicas[r.Addr] = true
	}
	for i := range 200 {
		k := fmt.Sprintf("rr:%d", i)
		_, err := c.Do(ctx, "SET", k, i)
		require.NoError(t, err)
	}
	var readsOnReplicas int64
	waitFor(t, 30*time.Second, "replicated reads", func() bool {
		for i := range 200 {
			v, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("rr:%d", i)))
			if err != nil || v != i {
				return false
			}
		}
		return true
	})
	var onMasters int64
	for _, n := range c.Stats().Nodes {
		if replicas[n.Node.Addr] {
			readsOnReplicas += n.Commands
			assert.Zero(t, n.Errors, "replica %s", n.Node.Addr)
		} else {
			onMasters += n.Commands
		}
	}
	assert.GreaterOrEqual(t, readsOnReplicas, int64(200), "GETs went to the replicas")
	// Every SET went to a master (a replica would have refused it).
	assert.GreaterOrEqual(t, onMasters, int64(200), "SETs went to the masters")
}

// TestSentinelACLUser logs in to the Sentinels as an ACL user (the
// default user is off there) and to the data nodes as another one.
func TestSentinelACLUser(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{
		Shards:           2,
		Data:             redistest.Options{Users: []redistest.User{{Name: sentDataUser, Password: sentDataPW}}},
		SentinelUser:     "watcher",
		SentinelPassword: sentPW,
	})
	cfg := sentinelConfig(set)
	cfg.Sentinel.Username = "watcher"
	c := newClient(t, cfg)
	_, err := c.Do(context.Background(), "SET", "acl:k", "v")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "subscriptions as the ACL user", func() bool {
		for _, s := range c.Stats().Sentinel {
			if s.Subscribed != 3 {
				return false
			}
		}
		return true
	})

	cfg.Sentinel.Username = "default"
	_, err = shard.New(context.Background(), cfg)
	require.Error(t, err, "the default user is off on the Sentinels")
	assert.ErrorIs(t, err, sentinel.ErrNoSentinel)
	assert.NotContains(t, err.Error(), sentPW)
}

// startTLSSentinels starts two Sentinel shards whose Sentinels and data
// nodes accept TLS only (the Sentinels also require a client
// certificate) and returns them with a client config for them.
func startTLSSentinels(t *testing.T) (*redistest.SentinelSet, shard.Config) {
	t.Helper()
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{
		Shards:           2,
		Data:             redistest.Options{TLS: true, TLSClientAuth: true, DefaultPassword: sentDataPW},
		SentinelPassword: sentPW,
	})
	cfg := sentinelConfig(set)
	cfg.Pool.Username = ""
	cfg.Pool.TLSConfig = set.Shards[0].Nodes[0].TLS.ClientConfig()
	cfg.Pool.TLSConfig.ServerName = "" // checked against each resolved master's host
	cfg.Sentinel.TLSConfig = set.Sentinels[0].TLS.ClientConfig()
	return set, cfg
}

// TestSentinelTLS runs Sentinels and data nodes that accept TLS only (the
// Sentinels also require a client certificate) and routes through them.
func TestSentinelTLS(t *testing.T) {
	set, cfg := startTLSSentinels(t)
	c := newClient(t, cfg)
	ctx := context.Background()
	for i := range 50 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("tls:%d", i), i)
		require.NoError(t, err)
	}
	st := c.Stats()
	require.Len(t, st.Sentinel, 2)
	for i, s := range st.Sentinel {
		m, err := set.Master(i)
		require.NoError(t, err)
		assert.Equal(t, m.Addr, s.Master)
	}
	waitFor(t, 30*time.Second, "TLS subscriptions", func() bool {
		for _, s := range c.Stats().Sentinel {
			if s.Subscribed != 3 {
				return false
			}
		}
		return true
	})

	// Without TLS to the Sentinels nothing answers.
	cfg.Sentinel.TLSConfig = nil
	_, err := shard.New(ctx, cfg)
	require.Error(t, err)
	assert.ErrorIs(t, err, sentinel.ErrNoSentinel)
}

// TestSentinelFollowsReadOnlyMaster demotes a shard's master behind the
// Sentinels' back (they are all dead, so nothing else tells the client):
// its connections stay open and answer writes with -READONLY, which makes
// the client ask the demoted master for its ROLE and follow it to the new
// master. With FailoverWait the write that met READONLY is sent again
// there; without, it fails with the READONLY reply and the next write
// succeeds.
func TestSentinelFollowsReadOnlyMaster(t *testing.T) {
	tests := []struct {
		wait time.Duration
		// busy: the shard's automatic pipeline is kept busy by reads of
		// another key, so that its connection to the old master never
		// idles; it must be dropped all the same once the new master is
		// known.
		busy bool
	}{
		{5 * time.Second, false},
		{0, false},
		{5 * time.Second, true},
	}
	for _, tt := range tests {
		wait := tt.wait
		t.Run(fmt.Sprintf("FailoverWait=%v,busy=%t", wait, tt.busy), func(t *testing.T) {
			set := startSentinelSet(t)
			cfg := sentinelConfig(set)
			cfg.Sentinel.FailoverWait = wait
			cfg.Sentinel.RefreshInterval = -1 // only the READONLY reply triggers the query
			cfg.DisableAutoPipeline = !tt.busy
			c := newClient(t, cfg)
			ctx := context.Background()
			var keys []string
			for i := 0; len(keys) < 2; i++ {
				k := fmt.Sprintf("ro:%d", i)
				if n, _ := c.Router().Route(k); n.Name == "shard-0" {
					keys = append(keys, k)
				}
			}
			key := keys[0]
			_, err := c.Do(ctx, "SET", key, "1")
			require.NoError(t, err)
			if tt.busy {
				shard.AlwaysPipeline(c)
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(2 * time.Millisecond):
							c.Do(ctx, "GET", keys[1]) // its result does not matter
						}
					}
				})
				defer func() { close(stop); wg.Wait() }()
			}
			for _, s := range set.Sentinels {
				require.NoError(t, s.Kill())
			}
			old, err := set.Master(0)
			require.NoError(t, err)
			next, err := set.Replica(0)
			require.NoError(t, err)
			swapRoles(t, old, next)

			_, err = c.Do(ctx, "SET", key, "2")
			if wait == 0 {
				var re redis.Error
				require.ErrorAs(t, err, &re)
				assert.True(t, strings.HasPrefix(string(re), "READONLY"), "%v", err)
				waitFor(t, 30*time.Second, "a write to succeed", func() bool {
					_, err := c.Do(ctx, "SET", key, "2")
					return err == nil
				})
			} else {
				require.NoError(t, err, "sent again to the new master")
			}
			got, err := next.Do("GET", key)
			require.NoError(t, err)
			assert.Equal(t, "2", got)
			st := c.Stats().Sentinel[0]
			assert.Equal(t, next.Addr, st.Master)
			assert.Equal(t, int64(1), st.Failovers)
			assert.True(t, st.Stale, "no Sentinel answered")
		})
	}
}
