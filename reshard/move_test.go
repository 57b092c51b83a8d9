package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// owner returns the address package ring (not the mover) places key on.
func owner(t *testing.T, cfg shard.Config, key string) string {
	t.Helper()
	r, err := ring.New(cfg.RingConfig())
	require.NoError(t, err)
	return r.Shards()[r.Locate(key)].Addr
}

// fill sets prefix:i = i for i in 0..n-1 through a client of cfg.
func fill(t *testing.T, cfg shard.Config, prefix string, n int) {
	t.Helper()
	c := newClient(t, cfg)
	pl := c.Pipeline()
	for i := 0; i < n; i++ {
		pl.Send("SET", fmt.Sprintf("%s:%d", prefix, i), i)
	}
	res, err := pl.Exec(context.Background())
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err)
	}
	c.Close()
}

// incrEvens increments through c the even keys of a fill of prefix and
// n: prefix:i becomes i+1 for an even i.
func incrEvens(t *testing.T, c *shard.Client, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i += 2 {
		_, err := c.Do(context.Background(), "INCR", fmt.Sprintf("%s:%d", prefix, i))
		require.NoError(t, err)
	}
}

// requireFillIncremented reads through c every key of a fill of prefix
// and n whose even keys incrEvens incremented: prefix:i must be i + 1 for
// an even i, i for an odd one.
func requireFillIncremented(t *testing.T, c *shard.Client, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("%s:%d", prefix, i)
		v, err := redis.Int(c.Do(context.Background(), "GET", k))
		require.NoError(t, err, k)
		want := i
		if i%2 == 0 {
			want++
		}
		require.Equal(t, want, v, "key %s", k)
	}
}

func TestMoveRefusesWhileAProcessRoutesByOneTopology(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	names := []string{"s0", "s1", "s2"}
	from, to := mustParse(t, ringURL(servers[:2], names[:2], nil)), mustParse(t, ringURL(servers, names, nil))

	plain := from
	plain.Pool.ClientName = shard.AutoClientName
	stale := newClient(t, plain)
	_, err := stale.Do(ctx, "SET", "k", 1)
	require.NoError(t, err)
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to})
	var ce *reshard.ClientsError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, reshard.ErrClients)
	require.NotEmpty(t, ce.Conns)
	assert.Contains(t, ce.Conns[0].Reason, "routes by topology "+shard.TopologyID(from)+" alone")
	assert.Contains(t, ce.Conns[0].Name, shard.TopologyID(from))
	assert.NotEmpty(t, ce.Conns[0].ID)
	assert.Contains(t, err.Error(), ce.Conns[0].Addr, "the error names the connection")
	stale.Close()

	unnamed := newClient(t, from)
	_, err = unnamed.Do(ctx, "SET", "k", 1)
	require.NoError(t, err)
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to})
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Conns[0].Reason, "not named by a shardis client")
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, AllowUnnamed: true})
	require.NoError(t, err, "unnamed connections may be allowed")
	unnamed.Close()

	// A process in migration mode for this very migration does not block it.
	mig := to
	mig.Pool.ClientName = shard.AutoClientName
	f := from
	mig.Migration = &shard.Migration{From: &f}
	migrating := newClient(t, mig)
	_, err = migrating.Do(ctx, "GET", "k")
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the beacons", func() bool {
		return reshard.CheckClients(ctx, from, to, false) == nil
	})
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to})
	require.NoError(t, err)
}

func TestMoveDryRunCountsAndMovesNothing(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	names := []string{"s0", "s1", "s2", "s3"}
	from, to := mustParse(t, ringURL(servers[:3], names[:3], nil)), mustParse(t, ringURL(servers, names, nil))
	const n = 2000
	fill(t, from, "dry", n)
	want := map[[2]string]int64{}
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("dry:%d", i)
		if a, b := owner(t, from, k), owner(t, to, k); a != b {
			want[[2]string{a, b}]++
		}
	}
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, int64(n), rep.Scanned)
	got := map[[2]string]int64{}
	var moved int64
	for _, f := range rep.Flows {
		got[[2]string{f.From, f.To}] = f.Keys
		moved += f.Keys
		assert.Greater(t, f.Bytes, f.Keys*8, "bytes of %s -> %s", f.From, f.To)
	}
	assert.Equal(t, want, got)
	assert.Equal(t, moved, rep.Moved)
	size, err := servers[3].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, "0", size, "a dry run moves nothing")
}

func TestMoveKeepsEveryTypeAndTTL(t *testing.T) {
	big, fields := 5<<20, 100_000
	if os.Getenv("SHARDIS_RESHARD_FULL") != "" {
		big, fields = 50<<20, 1_000_000
	}
	for _, dump := range []bool{false, true} {
		t.Run(fmt.Sprintf("dump=%t", dump), func(t *testing.T) {
			ctx := context.Background()
			servers, from, to := moveAll(t) // every key moves
			src := servers[0]
			cmds := [][]any{
				{"SET", "str", "hello"},
				{"SET", "ttl", "x", "PX", 50000},
				{"HSET", "hash", "a", 1, "b", 2},
				{"RPUSH", "list", "a", "b", "c"},
				{"SADD", "set", "a", "b"},
				{"ZADD", "zset", 1, "a", 2, "b"},
				{"XADD", "stream", "1-1", "f", "v"},
				{"PFADD", "hll", "a", "b", "c"},
				{"SET", "bin\x00\xff\r\nkey", "\x00\x01\x02"},
				{"SET", "big", strings.Repeat("v", big)},
			}
			conn, err := redis.Dial("tcp", src.Addr)
			require.NoError(t, err)
			defer conn.Close()
			ttlSetAt := time.Now() // the PX 50000 key is written right after
			for _, c := range cmds {
				_, err := conn.Do(c[0].(string), c[1:]...)
				require.NoError(t, err)
			}
			for i := 0; i < fields; i += 1000 {
				args := []any{"bighash"}
				for j := i; j < i+1000; j++ {
					args = append(args, j, j)
				}
				_, err := conn.Do("HSET", args...)
				require.NoError(t, err)
			}
			keys := []string{"str", "ttl", "hash", "list", "set", "zset", "stream", "hll", "bin\x00\xff\r\nkey", "big", "bighash"}
			before := map[string][]byte{}
			for _, k := range keys {
				b, err := redis.Bytes(conn.Do("DUMP", k))
				require.NoError(t, err, k)
				before[k] = b
			}
			rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Dump: dump, Batch: 4, SkipClientCheck: true})
			require.NoError(t, err)
			assert.Equal(t, int64(len(keys)), rep.Moved)
			dst, err := redis.Dial("tcp", servers[1].Addr)
			require.NoError(t, err)
			defer dst.Close()
			for _, k := range keys {
				b, err := redis.Bytes(dst.Do("DUMP", k))
				require.NoError(t, err, k)
				switch k {
				case "set", "bighash": // hash tables: the same content may dump in another order
					assert.Equal(t, len(before[k]), len(b), "key %q arrives with its size", k)
				default:
					assert.True(t, string(before[k]) == string(b), "key %q arrives unchanged", k)
				}
				n, err := redis.Int(conn.Do("EXISTS", k))
				require.NoError(t, err)
				assert.Zero(t, n, "key %q left the old node", k)
			}
			pttl, err := redis.Int64(dst.Do("PTTL", "ttl"))
			require.NoError(t, err)
			assert.InDelta(t, 50000-time.Since(ttlSetAt).Milliseconds(), pttl, 1000, "the TTL moved with the key")
			members, err := redis.Strings(dst.Do("SMEMBERS", "set"))
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{"a", "b"}, members)
			got, err := redis.IntMap(dst.Do("HGETALL", "bighash"))
			require.NoError(t, err)
			require.Len(t, got, fields)
			for i := 0; i < fields; i += 997 {
				assert.Equal(t, i, got[fmt.Sprint(i)])
			}
		})
	}
}

func TestMoveNeverOverwritesTheNewOwner(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	for _, dump := range []bool{false, true} {
		for i, s := range servers {
			_, err := s.Do("FLUSHALL")
			require.NoError(t, err)
			_, err = s.Do("SET", "k", fmt.Sprint("from-", i))
			require.NoError(t, err)
		}
		_, err := servers[0].Do("SET", "other", "x")
		require.NoError(t, err)
		rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Dump: dump})
		require.NoError(t, err)
		assert.Equal(t, int64(1), rep.Busy, "dump=%t", dump)
		v, err := servers[1].Do("GET", "k")
		require.NoError(t, err)
		assert.Equal(t, "from-1", v, "dump=%t: the new owner's copy stays", dump)
		for _, k := range []string{"k", "other"} {
			n, err := servers[0].Do("EXISTS", k)
			require.NoError(t, err)
			assert.Equal(t, "0", n, "dump=%t: %s left the old node", dump, k)
		}
	}
}

func TestMoveIsPacedAndReportsProgress(t *testing.T) {
	ctx := context.Background()
	_, from, to := moveAll(t)
	fill(t, from, "pace", 600)
	var (
		mu   sync.Mutex
		seen []reshard.Progress
	)
	start := time.Now()
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, KeysPerSecond: 1000, Batch: 50, ScanCount: 50,
		Progress: func(p reshard.Progress) { mu.Lock(); seen = append(seen, p); mu.Unlock() }})
	require.NoError(t, err)
	assert.Equal(t, int64(600), rep.Moved)
	assert.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond, "600 keys at 1000/s take over half a second")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	last := seen[len(seen)-1]
	assert.True(t, last.Done)
	assert.Equal(t, int64(600), last.Total)
	assert.Equal(t, int64(600), last.Moved)
	var withETA bool
	for _, p := range seen[:len(seen)-1] {
		withETA = withETA || p.ETA > 0
	}
	assert.True(t, withETA, "progress reports an ETA while running")
}

func TestVerifyReportsMisplacedKeys(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	names := []string{"s0", "s1", "s2"}
	cfg := mustParse(t, ringURL(servers, names, nil))
	fill(t, cfg, "v", 300)
	rep, err := reshard.Verify(ctx, cfg, reshard.VerifyOptions{})
	require.NoError(t, err)
	assert.Zero(t, rep.Misplaced)
	assert.Equal(t, int64(300), rep.Scanned)
	var wrong *redistest.Server
	for _, s := range servers {
		if s.Addr != owner(t, cfg, "stray") {
			wrong = s
		}
	}
	_, err = wrong.Do("SET", "stray", "1")
	require.NoError(t, err)
	rep, err = reshard.Verify(ctx, cfg, reshard.VerifyOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(1), rep.Misplaced)
	require.Len(t, rep.Samples, 1)
	assert.Equal(t, reshard.Misplaced{Key: "stray", Node: wrong.Addr, Owner: owner(t, cfg, "stray")}, rep.Samples[0])
}

func TestShardKilledMidMigration(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{Args: []string{"--appendonly", "yes", "--appendfsync", "always"}})
	names := []string{"s0", "s1", "s2", "s3"}
	from, to := mustParse(t, ringURL(servers[:3], names[:3], nil)), mustParse(t, ringURL(servers, names, nil))
	const n = 3000
	fill(t, from, "kill", n)
	mig := to
	f := from
	mig.Migration = &shard.Migration{From: &f}
	mig.Pool.ClientName = shard.AutoClientName
	c := newClient(t, mig)
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	moveErr := make(chan error, 1)
	var moved sync.WaitGroup
	moved.Add(1)
	var once sync.Once
	go func() {
		_, err := reshard.Move(mctx, reshard.Options{From: from, To: to, KeysPerSecond: 1000, Batch: 20,
			Progress: func(p reshard.Progress) {
				if p.Moved > 100 {
					once.Do(moved.Done)
				}
			}})
		once.Do(moved.Done)
		moveErr <- err
	}()
	moved.Wait()
	dead := servers[1]
	require.NoError(t, dead.Kill())
	select {
	case err := <-moveErr:
		var ne *shard.NodeError
		assert.True(t, err == nil || errors.As(err, &ne), "mover: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the mover did not stop")
	}
	// While the shard is down, only keys that it owns in either topology fail.
	var failed, served int
	for i := 0; i < n; i += 3 {
		k := fmt.Sprintf("kill:%d", i)
		_, err := c.Do(ctx, "INCR", k)
		touches := owner(t, from, k) == dead.Addr || owner(t, to, k) == dead.Addr
		if touches {
			if err != nil {
				failed++
			}
			continue
		}
		require.NoError(t, err, "key %s does not touch the dead shard", k)
		served++
	}
	assert.Positive(t, failed)
	assert.Positive(t, served)
	require.NoError(t, dead.Restart())
	waitFor(t, 30*time.Second, "the shard to serve again", func() bool {
		_, err := c.Do(ctx, "GET", "kill:1")
		return err == nil
	})
	c.Close()
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to})
	require.NoError(t, err)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	plain := newClient(t, to)
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("kill:%d", i)
		v, err := redis.Int(plain.Do(ctx, "GET", k))
		require.NoError(t, err, k)
		want := i
		if i%3 == 0 && owner(t, from, k) != dead.Addr && owner(t, to, k) != dead.Addr {
			want++
		}
		if i%3 == 0 && v == i+1 {
			want = i + 1 // an INCR the dead shard applied before failing the reply is fine
		}
		assert.Equal(t, want, v, "key %s (from %s, to %s, dead %s)", k, owner(t, from, k), owner(t, to, k), dead.Addr)
	}
}

func TestRollbackAtHalfWay(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	names := []string{"s0", "s1", "s2", "s3"}
	from, to := mustParse(t, ringURL(servers[:3], names[:3], nil)), mustParse(t, ringURL(servers, names, nil))
	const n = 4000
	fill(t, from, "rb", n)
	probe, err := reshard.Move(ctx, reshard.Options{From: from, To: to, DryRun: true})
	require.NoError(t, err)
	half := probe.Moved / 2
	require.Positive(t, half)

	cfg := from
	cfg.Pool.ClientName = shard.AutoClientName
	c := newClient(t, cfg)
	require.NoError(t, c.StartMigration(ctx, to))
	waitFor(t, 10*time.Second, "the beacons", func() bool { return reshard.CheckClients(ctx, from, to, false) == nil })
	mctx, cancel := context.WithCancel(ctx)
	rep, err := reshard.Move(mctx, reshard.Options{From: from, To: to, KeysPerSecond: 2000, Batch: 20,
		Progress: func(p reshard.Progress) {
			if p.Moved >= half {
				cancel()
			}
		}})
	cancel()
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, rep.Moved, probe.Moved, "stopped part-way")
	size, err := strconvAtoi(servers[3].Do("DBSIZE"))
	require.NoError(t, err)
	require.Positive(t, size, "some keys had moved to the new shard")

	// Back: the client routes by the old topology and moves keys back on
	// use; the mover runs in the reverse direction.
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseArmed, info.Phase, "the mover armed the fence")
	require.NoError(t, c.AbortMigration(ctx))
	// Until the reverse fence is up, the client keeps moving forward (as
	// every other armed process does), so nothing is lost either way.
	info, ok = c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase, "the rollback waits for its own fence")
	incrEvens(t, c, "rb", n)
	moveBack(t, from, to, 10*time.Second)
	waitArmed(t, c, "the client to see the reverse fence armed")
	require.NoError(t, c.FinishMigration())
	// Every process is back on the old config: the markers go.
	require.NoError(t, reshard.ClearFence(ctx, to, from))
	require.NoError(t, reshard.ClearFence(ctx, from, to))
	for _, s := range servers {
		size, err = strconvAtoi(s.Do("DBSIZE"))
		require.NoError(t, err)
		if s == servers[3] {
			assert.Zero(t, size, "nothing is left on the shard that was being added")
		}
		keys, err := s.Do("KEYS", "shardis:migration:*")
		require.NoError(t, err)
		assert.Empty(t, keys, "no marker left on %s", s.Addr)
	}
	requireFillIncremented(t, c, "rb", n)
}

func strconvAtoi(s string, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscan(s, &n)
	return n, err
}
