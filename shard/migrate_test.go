package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ringOwner returns the address that package ring (not the client) places
// key on.
func ringOwner(t *testing.T, cfg shard.Config, key string) string {
	t.Helper()
	r := ringOf(t, cfg.RingConfig())
	return r.Shards()[r.Locate(key)].Addr
}

// rings holds the rings that ringOf built, by their configuration in
// %#v (ring.Config holds values only): building one takes milliseconds
// with -race, and the tests place thousands of keys on a few rings.
var rings sync.Map // string -> *ring.Ring

// ringOf returns the ring of cfg, built once.
func ringOf(t *testing.T, cfg ring.Config) *ring.Ring {
	t.Helper()
	k := fmt.Sprintf("%#v", cfg)
	if r, ok := rings.Load(k); ok {
		return r.(*ring.Ring)
	}
	r, err := ring.New(cfg)
	require.NoError(t, err)
	rings.Store(k, r)
	return r
}

// holders returns the servers that hold key.
func holders(t *testing.T, servers []*redistest.Server, key string) []string {
	t.Helper()
	var out []string
	for _, s := range servers {
		n, err := s.Do("EXISTS", key)
		require.NoError(t, err)
		if n == "1" {
			out = append(out, s.Addr)
		}
	}
	return out
}

func TestMigrationMovesEachKeyBeforeItsCommand(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	three, four := ringConfig(servers[:3]), ringConfig(servers)
	reweighted := ringConfig(servers[:3])
	reweighted.Shards[0].Weight = 3
	cases := []struct {
		name     string
		from, to shard.Config
		runtime  bool // StartMigration on a live client instead of Config.Migration
	}{
		{"grow 3 to 4", three, four, false},
		{"shrink 4 to 3", four, three, false},
		{"reweight", three, reweighted, false},
		{"grow at run time", three, four, true},
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range servers {
				_, err := s.Do("FLUSHALL")
				require.NoError(t, err)
			}
			p := fmt.Sprintf("c%d:", ci)
			old := newClient(t, tc.from)
			const n = 300
			setAt := make([]time.Time, n)
			for i := 0; i < n; i++ {
				k := p + strconv.Itoa(i)
				setAt[i] = time.Now()
				_, err := old.Do(ctx, "SET", k+":s", "v"+strconv.Itoa(i))
				require.NoError(t, err)
				_, err = old.Do(ctx, "INCRBY", k+":n", 10)
				require.NoError(t, err)
				_, err = old.Do(ctx, "HSET", k+":h", "f", 1)
				require.NoError(t, err)
				_, err = old.Do(ctx, "RPUSH", k+":l", "a")
				require.NoError(t, err)
				_, err = old.Do(ctx, "SET", k+":t", "x", "EX", 100)
				require.NoError(t, err)
			}
			var c *shard.Client
			if tc.runtime {
				c = newClient(t, tc.from)
				require.NoError(t, c.StartMigration(ctx, tc.to))
				require.NoError(t, c.ArmMigration()) // alone on the old nodes
				_, on := c.Migration()
				require.True(t, on)
			} else {
				cfg := tc.to
				from := tc.from
				cfg.Migration = &shard.Migration{From: &from, Armed: true}
				c = newClient(t, cfg)
			}
			moving := 0
			for i := 0; i < n; i++ {
				k := p + strconv.Itoa(i)
				if ringOwner(t, tc.from, k+":n") != ringOwner(t, tc.to, k+":n") {
					moving++
				}
				// GETEX without options: a write that changes nothing, so the key
				// moves (a read is answered at the old owner, without moving).
				v, err := redis.String(c.Do(ctx, "GETEX", k+":s"))
				require.NoError(t, err)
				assert.Equal(t, "v"+strconv.Itoa(i), v)
				got, err := redis.Int(c.Do(ctx, "INCR", k+":n"))
				require.NoError(t, err)
				assert.Equal(t, 11, got, "INCR on %s continues the old counter", k)
				got, err = redis.Int(c.Do(ctx, "HINCRBY", k+":h", "f", 2))
				require.NoError(t, err)
				assert.Equal(t, 3, got)
				got, err = redis.Int(c.Do(ctx, "LPUSH", k+":l", "b"))
				require.NoError(t, err)
				assert.Equal(t, 2, got)
				pttl, err := redis.Int64(c.Do(ctx, "PTTL", k+":t")) // read where it is
				require.NoError(t, err)
				left := 100*time.Second - time.Since(setAt[i])
				assert.InDelta(t, left.Milliseconds(), pttl, 1000, "the TTL of %s before its move", k)
				_, err = c.Do(ctx, "GETEX", k+":t")
				require.NoError(t, err)
				pttl, err = redis.Int64(c.Do(ctx, "PTTL", k+":t"))
				require.NoError(t, err)
				left = 100*time.Second - time.Since(setAt[i])
				assert.InDelta(t, left.Milliseconds(), pttl, 1000, "the TTL of %s moved with it", k)
			}
			require.Greater(t, moving, n/10, "the change moves some keys")
			// Every key now sits at its new owner only.
			for i := 0; i < n; i += 7 {
				for _, suffix := range []string{":s", ":n", ":h", ":l", ":t"} {
					k := p + strconv.Itoa(i) + suffix
					assert.Equal(t, []string{ringOwner(t, tc.to, k)}, holders(t, servers, k), "key %s", k)
				}
			}
		})
	}
}

func TestMigrationBatchesPipelinesAndMultiKeyCommands(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	old := newClient(t, from)
	keys := make([]any, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("mk:%d", i)
		_, err := old.Do(ctx, "SET", keys[i], i)
		require.NoError(t, err)
	}
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)
	vals, err := redis.Ints(c.Do(ctx, "MGET", keys...))
	require.NoError(t, err)
	require.Len(t, vals, len(keys))
	for i, v := range vals {
		assert.Equal(t, i, v)
	}
	p := c.Pipeline()
	for i := range keys {
		p.Send("INCR", keys[i])
	}
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, len(keys))
	for i, r := range res {
		require.NoError(t, r.Err)
		assert.Equal(t, int64(i+1), r.Reply)
	}
	n, err := redis.Int(c.Do(ctx, "DEL", keys...))
	require.NoError(t, err)
	assert.Equal(t, len(keys), n)
	for _, s := range servers {
		size, err := s.Do("DBSIZE")
		require.NoError(t, err)
		assert.Equal(t, "0", size, "server %s", s.Addr)
	}
}

func TestMigrationKeepsTheNewOwnersCopy(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	key := movingKeys(t, from, to, "busy:", 1)[0]
	srv := map[string]*redistest.Server{}
	for _, s := range servers {
		srv[s.Addr] = s
	}
	_, err := srv[ringOwner(t, from, key)].Do("SET", key, "old")
	require.NoError(t, err)
	_, err = srv[ringOwner(t, to, key)].Do("SET", key, "new")
	require.NoError(t, err)
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)
	// GETEX without options: a write that changes nothing, so the key
	// moves (a read would be answered by the old copy, which under the
	// protocol can only be identical to a copy at the new owner).
	v, err := redis.String(c.Do(ctx, "GETEX", key))
	require.NoError(t, err)
	assert.Equal(t, "new", v)
	assert.Equal(t, []string{ringOwner(t, to, key)}, holders(t, servers, key))
	info, _ := c.Migration()
	assert.Equal(t, int64(1), info.BusyKeys)
}

func TestMigrationScanReportsEveryKeyOnce(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	old := newClient(t, from)
	const n = 500
	for i := 0; i < n; i++ {
		_, err := old.Do(ctx, "SET", fmt.Sprintf("sc:%d", i), i)
		require.NoError(t, err)
	}
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)
	for i := 0; i < n; i += 2 { // half of the keys move on use
		_, err := c.Do(ctx, "GET", fmt.Sprintf("sc:%d", i))
		require.NoError(t, err)
	}
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 50})
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err())
	require.Len(t, seen, n)
	for k, times := range seen {
		assert.Equal(t, 1, times, "key %s", k)
	}
	// ForEachShard reaches the old and the new nodes.
	var visited []string
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	require.NoError(t, c.ForEachShard(ctx, func(ctx context.Context, node shard.Node, conn redis.Conn) error {
		<-mu
		visited = append(visited, node.Addr)
		mu <- struct{}{}
		return nil
	}))
	assert.Len(t, visited, 4)
}

func TestMigrationTxWatchesTheMovedKey(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	key := movingKeys(t, from, to, "tx:", 1)[0]
	old := newClient(t, from)
	_, err := old.Do(ctx, "SET", key, 41)
	require.NoError(t, err)
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)
	out, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		v, err := redis.Int(tx.Do("GET", key))
		if err != nil {
			return err
		}
		return tx.Queue("SET", key, v+1)
	})
	require.NoError(t, err)
	require.Len(t, out, 1)
	v, err := redis.Int(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	assert.Equal(t, []string{ringOwner(t, to, key)}, holders(t, servers, key))
}

func TestAbortMigrationMovesKeysBack(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	c := newClient(t, from)
	const n = 200
	for i := 0; i < n; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("ab:%d", i), i)
		require.NoError(t, err)
	}
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	for i := 0; i < n; i += 2 {
		_, err := c.Do(ctx, "INCR", fmt.Sprintf("ab:%d", i))
		require.NoError(t, err)
	}
	require.NoError(t, c.AbortMigration(ctx))
	require.NoError(t, c.ArmMigration())
	info, ok := c.Migration()
	require.True(t, ok)
	assert.NotEqual(t, info.FromID, info.ToID)
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("ab:%d", i)
		want := i
		if i%2 == 0 {
			want++
		}
		v, err := redis.Int(c.Do(ctx, "GETEX", k)) // a write: moves it back
		require.NoError(t, err)
		assert.Equal(t, want, v, "key %s", k)
		assert.Equal(t, []string{ringOwner(t, from, k)}, holders(t, servers, k))
	}
	require.NoError(t, c.FinishMigration())
	_, ok = c.Migration()
	assert.False(t, ok)
	assert.ErrorIs(t, c.FinishMigration(), shard.ErrMigration)
}

func TestMigrationFailsOnlyTheKeysOfADownOldOwner(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)
	require.NoError(t, servers[0].Kill())
	var failed, ok int
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("down:%d", i)
		_, err := c.Do(ctx, "SET", k, 1)
		oldOwner, newOwner := ringOwner(t, from, k), ringOwner(t, to, k)
		switch {
		case oldOwner != servers[0].Addr && newOwner != servers[0].Addr:
			require.NoError(t, err, "key %s does not touch the dead server", k)
			ok++
		case oldOwner == servers[0].Addr && newOwner != servers[0].Addr:
			var me *shard.MigrateError
			require.ErrorAs(t, err, &me, "key %s", k)
			assert.ErrorIs(t, err, shard.ErrMigration)
			assert.Equal(t, servers[0].Addr, me.From.Addr)
			assert.NotContains(t, err.Error(), "AUTH")
			failed++
		default:
			require.Error(t, err)
		}
	}
	assert.Positive(t, failed)
	assert.Positive(t, ok)
}

func TestMigrationWithAnACLUser(t *testing.T) {
	ctx := context.Background()
	opts := redistest.Options{Users: []redistest.User{{Name: "app", Password: "s3cret-pw"}}}
	servers := redistest.StartNTB(t, 4, opts)
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	for _, cfg := range []*shard.Config{&from, &to} {
		cfg.Pool.Username, cfg.Pool.Password = "app", "s3cret-pw"
	}
	old := newClient(t, from)
	for i := 0; i < 100; i++ {
		_, err := old.Do(ctx, "SET", fmt.Sprintf("acl:%d", i), i)
		require.NoError(t, err)
	}
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)
	for i := 0; i < 100; i++ {
		v, err := redis.Int(c.Do(ctx, "INCR", fmt.Sprintf("acl:%d", i)))
		require.NoError(t, err)
		assert.Equal(t, i+1, v)
	}
}

// yearRouter places "y<year>:..." keys by year: the user's own rule.
type yearRouter struct{ recent, archive shard.Node }

func (r yearRouter) Route(key string) (shard.Node, error) {
	if strings.HasPrefix(key, "y2020:") {
		return r.archive, nil
	}
	return r.recent, nil
}

func (r yearRouter) Nodes() []shard.Node { return []shard.Node{r.recent, r.archive} }

// archiveMigration returns the two yearRouter configs of moving the 2020
// keys to an archive server: from, where servers[0] holds every year,
// and to, where servers[1] holds 2020.
func archiveMigration(servers []*redistest.Server) (from, to shard.Config) {
	recent := shard.Node{Name: "recent", Addr: servers[0].Addr}
	archive := shard.Node{Name: "archive", Addr: servers[1].Addr}
	base := ringConfig(servers[:1])
	from = shard.Config{Router: yearRouter{recent: recent, archive: recent}, Pool: base.Pool, Health: base.Health}
	to = shard.Config{Router: yearRouter{recent: recent, archive: archive}, Pool: base.Pool, Health: base.Health}
	return from, to
}

func TestMigrationToAUsersRouter(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, to := archiveMigration(servers)
	c := newClient(t, from)
	for _, k := range []string{"y2020:a", "y2020:b", "y2024:a"} {
		_, err := c.Do(ctx, "SET", k, k)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{servers[0].Addr}, holders(t, servers, "y2020:a"))
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	v, err := redis.String(c.Do(ctx, "GETEX", "y2020:a")) // a write: moves it
	require.NoError(t, err)
	assert.Equal(t, "y2020:a", v)
	assert.Equal(t, []string{servers[1].Addr}, holders(t, servers, "y2020:a"))
	assert.Equal(t, []string{servers[0].Addr}, holders(t, servers, "y2024:a"))
}

func TestMigrationRingToCluster(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cl := clusterForTest(t)
	from := ringConfig(servers)
	old := newClient(t, from)
	const n = 300
	for i := 0; i < n; i++ {
		_, err := old.Do(ctx, "SET", fmt.Sprintf("r2c:%d", i), i, "EX", 1000)
		require.NoError(t, err)
	}
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: cl.Seeds(), Pool: from.Pool, Health: from.Health,
		Migration: &shard.Migration{From: &from, Armed: true}}
	c := newClient(t, cfg)
	keys := make([]any, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("r2c:%d", i)
	}
	vals, err := redis.Ints(c.Do(ctx, "MGET", keys...))
	require.NoError(t, err)
	require.Len(t, vals, n)
	for i, v := range vals {
		assert.Equal(t, i, v)
	}
	// Read at the ring, where the keys are; writes move them.
	p := c.Pipeline()
	for _, k := range keys {
		p.Send("GETEX", k)
	}
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, n)
	for i, r := range res {
		require.NoError(t, r.Err)
		v, err := redis.Int(r.Reply, nil)
		require.NoError(t, err)
		assert.Equal(t, i, v)
	}
	for _, s := range servers {
		size, err := s.Do("DBSIZE")
		require.NoError(t, err)
		assert.Equal(t, "0", size, "every key left ring server %s", s.Addr)
	}
	ttl, err := redis.Int(c.Do(ctx, "TTL", "r2c:7"))
	require.NoError(t, err)
	assert.InDelta(t, 1000, ttl, 3)
	_, err = c.Do(ctx, "DEL", keys...)
	require.NoError(t, err)
}

func TestMigrationBeaconNamesBothTopologies(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, to := ringConfig(servers[:1]), ringConfig(servers)
	cfg := to
	cfg.Migration = &shard.Migration{From: &from}
	c := newClient(t, cfg)
	_, err := c.Do(ctx, "SET", "b", 1)
	require.NoError(t, err)
	want := shard.TopologyID(from) + ">" + shard.TopologyID(to)
	waitFor(t, 10*time.Second, "a beacon on the old node", func() bool {
		list, err := servers[0].Do("CLIENT", "LIST")
		return err == nil && strings.Contains(list, ":migrating:"+want)
	})
	// Armed, the beacon says so (the mover waits for it).
	require.NoError(t, c.ArmMigration())
	waitFor(t, 10*time.Second, "the beacon renamed armed", func() bool {
		list, err := servers[0].Do("CLIENT", "LIST")
		return err == nil && strings.Contains(list, ":armed:"+want) && !strings.Contains(list, ":migrating:")
	})
	require.NoError(t, c.FinishMigration())
	waitFor(t, 10*time.Second, "the beacon to close", func() bool {
		list, err := servers[0].Do("CLIENT", "LIST")
		return err == nil && !strings.Contains(list, want)
	})
}

func TestParseClientName(t *testing.T) {
	cases := []struct {
		in   string
		want shard.ClientName
		ok   bool
	}{
		{"shardis:ab12:ring-1f", shard.ClientName{Instance: "ab12", Topology: "ring-1f"}, true},
		{"shardis:ab12:migrating:ring-1>ring-2", shard.ClientName{Instance: "ab12", Migrating: true, From: "ring-1", To: "ring-2"}, true},
		{"shardis:ab12:migrating:ring-1", shard.ClientName{}, false},
		{"shardis::ring", shard.ClientName{}, false},
		{"jedis", shard.ClientName{}, false},
		{"", shard.ClientName{}, false},
	}
	for _, tc := range cases {
		got, ok := shard.ParseClientName(tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		if ok {
			assert.Equal(t, tc.in, got.String())
		}
	}
}

func TestMigrationConfigForms(t *testing.T) {
	u, err := shard.ParseURL("redis-ring://127.0.0.1:7001,127.0.0.1:7002?from=" +
		"redis-ring%3A%2F%2F127.0.0.1%3A7001%3Fhash%3Dketama")
	require.NoError(t, err)
	require.NotNil(t, u.Migration)
	require.NotNil(t, u.Migration.From)
	assert.Equal(t, ring.Algorithm("ketama"), u.Migration.From.Hash)
	assert.Len(t, u.Migration.From.Shards, 1)

	y, err := shard.ParseConfig([]byte(`
url: redis-cluster://127.0.0.1:7001
migration:
  from: redis-ring://127.0.0.1:7101,127.0.0.1:7102
  addrs: {"127.0.0.1:7001": "10.0.0.1:7001"}
`))
	require.NoError(t, err)
	require.NotNil(t, y.Migration)
	assert.Len(t, y.Migration.From.Shards, 2)
	assert.Equal(t, "10.0.0.1:7001", y.Migration.Addrs["127.0.0.1:7001"])

	bad := []struct{ name, text string }{
		{"no from", "url: redis-ring://127.0.0.1:7001\nmigration: {addrs: {}}\n"},
		{"both", "url: redis-ring://127.0.0.1:7001\nmigration: {from: 'redis-ring://127.0.0.1:1', from_file: x}\n"},
		{"bad from", "url: redis-ring://127.0.0.1:7001\nmigration: {from: 'redis-ring://nohost'}\n"},
		{"auto eject", "url: redis-ring://127.0.0.1:7001\nhealth: {auto_eject: true}\nmigration: {from: 'redis-ring://127.0.0.1:7002'}\n"},
	}
	for _, tc := range bad {
		_, err := shard.ParseConfig([]byte(tc.text))
		assert.ErrorIs(t, err, shard.ErrBadConfig, tc.name)
	}
	cfg := shard.Config{Router: yearRouter{}, Shards: []ring.Shard{{Addr: "127.0.0.1:1"}}}
	assert.ErrorIs(t, cfg.Validate(), shard.ErrBadConfig)
	assert.True(t, errors.Is(shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}},
		Migration: &shard.Migration{}}.Validate(), shard.ErrBadConfig))
}
