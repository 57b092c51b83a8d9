package reshard_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// mutationTTL is the expiry (ms) of the keys that a mutation test sets as
// the mover's scan begins, and that expire, or are changed, before their
// move.
const mutationTTL = 3000

// TestReview21MoveUnderMutationsLosesAndResurrectsNothing moves every key
// of one server to another, with MIGRATE and with DUMP/RESTORE, while an
// application in migration mode increments counters throughout and,
// once the mover's page of keys is sorted but before any of it moves,
// changes those keys as a workload does: it lets one expire, takes the
// expiry off another, lengthens one, shortens one, sets one in the past,
// deletes one, renames one (RENAME, RENAMENX), copies one, moves one to
// another database (MOVE), and replaces a string by a set of the same
// name. Among the keys are thousands of tiny ones, empty strings, keys
// with CR, LF and NUL bytes, and a value of 24 MB.
//
// The end state must be exact: every key where it must be with its value
// and expiry, nothing left on the old server, no expired or deleted key
// back, every acknowledged increment counted, each key moved once (by the
// mover or by the application), and the verification clean.
func TestReview21MoveUnderMutationsLosesAndResurrectsNothing(t *testing.T) {
	for _, tt := range []struct {
		dump, toCluster bool
	}{{false, false}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("dump=%t,to cluster=%t", tt.dump, tt.toCluster), func(t *testing.T) {
			runMutations(t, tt.dump, tt.toCluster)
		})
	}
}

// runMutations runs the mutation test, to one server, or to a cluster of
// three masters (toCluster: no MOVE, a cluster has one database).
func runMutations(t *testing.T, dump, toCluster bool) {
	const (
		tiny     = 3000
		binary   = 20
		counters = 8
		bigSize  = 24 << 20
	)
	ctx := context.Background()
	servers, from, to := moveAll(t)
	news := servers[1:]
	if toCluster {
		cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
		to = mustParse(t, clusterURL(cl))
		news = cl.Masters()
	}
	old := newRawConn(t, servers[0])

	// Strings the end state must hold, with their values.
	want := map[string]string{}
	set := func(k, v string, args ...any) {
		_, err := old.Do("SET", append([]any{k, v}, args...)...)
		require.NoError(t, err)
	}
	for i := range tiny {
		k, v := fmt.Sprintf("tiny:%d", i), ""
		if i%2 == 1 {
			v = fmt.Sprint(i)
		}
		set(k, v)
		want[k] = v
	}
	for i := range binary {
		k, v := fmt.Sprintf("bin:\r\n\x00:%d\r\n", i), fmt.Sprintf("\x00\r\n%d\x00", i)
		set(k, v)
		want[k] = v
	}
	big := make([]byte, bigSize)
	_, err := rand.Read(big)
	require.NoError(t, err)
	_, err = old.Do("SET", "big", big)
	require.NoError(t, err)
	for i := range counters {
		set(fmt.Sprintf("cnt:%d", i), "0")
	}
	set("exp:shorten", "s", "EX", 600)
	set("exp:past", "p", "EX", 600)
	set("exp:pxat", "x")
	set("del", "d")
	set("{rn}:src", "rv", "PX", 600000)
	set("{rnx}:src", "a")
	set("{rnx}:dst", "b")
	set("{cp}:src", "c")
	if !toCluster {
		set("mv", "m")
	}
	set("ty", "str")
	want["{rn}:dst"] = "rv"
	want["{rnx}:src"], want["{rnx}:dst"] = "a", "b"
	want["{cp}:src"], want["{cp}:dst"] = "c", "c"
	want["exp:persist"], want["exp:extend"] = "p", "e"
	// Keys the old server held when the mover began, but the one that
	// expires before its move: each moved once, by the mover or the
	// application; and those the application never touches, which the
	// mover moves.
	keysAtStart := tiny + binary + 1 + counters + 10 + 2
	if toCluster {
		keysAtStart-- // no "mv"
	}
	untouched := tiny + binary + 1

	app := to
	f := from
	app.Migration = &shard.Migration{From: &f, Armed: true}
	client := newClient(t, app)

	// The keys that expire, or are changed, before their move are set as
	// the scan begins.
	var setAt time.Time
	var scanErr error
	var scanOnce sync.Once
	reshard.SetTestHookScan(func(shard.Node) {
		scanOnce.Do(func() {
			hook := newRawConnErr(servers[0])
			if hook == nil {
				scanErr = fmt.Errorf("no connection to the old server")
				return
			}
			defer hook.Close()
			setAt = time.Now()
			for _, k := range []string{"exp:gone", "exp:persist", "exp:extend"} {
				v := map[string]string{"exp:gone": "g", "exp:persist": "p", "exp:extend": "e"}[k]
				if _, scanErr = hook.Do("SET", k, v, "PX", mutationTTL); scanErr != nil {
					return
				}
			}
		})
	})
	defer reshard.SetTestHookScan(nil)

	// The application's changes, once the page is sorted, before any of
	// its keys moves; then the wait for the expiring keys' expiry.
	var pageErrs []error
	var early bool
	var pageOnce sync.Once
	reshard.SetTestHookPage(func(shard.Node) {
		pageOnce.Do(func() {
			early = time.Since(setAt) < mutationTTL*time.Millisecond
			for _, cmd := range [][]any{
				{"PERSIST", "exp:persist"},
				{"PEXPIRE", "exp:extend", 600000},
				{"PEXPIRE", "exp:shorten", 200},
				{"EXPIREAT", "exp:past", 1},
				{"PEXPIREAT", "exp:pxat", time.Now().Add(500 * time.Millisecond).UnixMilli()},
				{"DEL", "del"},
				{"RENAME", "{rn}:src", "{rn}:dst"},
				{"RENAMENX", "{rnx}:src", "{rnx}:dst"},
				{"COPY", "{cp}:src", "{cp}:dst"},
				{"DEL", "ty"},
				{"SADD", "ty", "member"},
			} {
				if _, err := client.Do(ctx, cmd[0].(string), cmd[1:]...); err != nil {
					pageErrs = append(pageErrs, fmt.Errorf("%v: %w", cmd, err))
				}
			}
			if !toCluster {
				if _, err := client.Do(ctx, "MOVE", "mv", 1); err != nil {
					pageErrs = append(pageErrs, fmt.Errorf("MOVE: %w", err))
				}
			}
			for time.Since(setAt) < (mutationTTL+100)*time.Millisecond {
				time.Sleep(10 * time.Millisecond) // the expiry is the condition waited for
			}
		})
	})
	defer reshard.SetTestHookPage(nil)

	// Increments throughout the move.
	cnt := make([]string, counters)
	for i := range cnt {
		cnt[i] = fmt.Sprintf("cnt:%d", i)
	}
	incr := startIncrementing(t, ctx, client, cnt)
	rep, moveErr := reshard.Move(ctx, reshard.Options{From: from, To: to, Dump: dump, SkipClientCheck: true, ScanCount: 10000})
	incr.stop()
	require.NoError(t, scanErr)
	require.EqualValues(t, 1, callsDone(&pageOnce), "the page hook ran")
	require.True(t, early, "the page was sorted before the expiring keys expired")
	require.Empty(t, pageErrs)
	require.Nil(t, incr.failed(), "an increment failed")
	require.NoError(t, moveErr)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	info, ok := client.Migration()
	require.True(t, ok)
	t.Logf("the mover moved %d keys (%d bytes), the application %d; busy %d", rep.Moved, rep.Bytes, info.Moves, rep.Busy)
	// The application's count is of its MIGRATE calls, one of which
	// (RENAMENX's) carries two keys; calls of its goroutines at once may
	// share one.
	assert.LessOrEqual(t, rep.Moved+info.Moves, int64(keysAtStart-1), "no key moved twice")
	assert.GreaterOrEqual(t, rep.Moved, int64(untouched), "the mover moved every key the application did not touch")
	assert.LessOrEqual(t, rep.Moved, int64(untouched+counters), "the mover moved no key the application changed before")
	assert.Zero(t, rep.Busy)

	// Nothing left on the old server, in either database, but the fence.
	requireOnlyFence(t, servers[0], 0)
	requireOnlyFence(t, servers[0], 1)

	dst := newClient(t, to)
	for k, v := range want {
		got, err := redis.String(dst.Do(ctx, "GET", k))
		require.NoError(t, err, "%q", k)
		require.Equal(t, v, got, "%q", k)
	}
	for i := range counters {
		k := fmt.Sprintf("cnt:%d", i)
		got, err := redis.Int64(dst.Do(ctx, "GET", k))
		require.NoError(t, err, k)
		assert.Equal(t, incr.acked(i), got, "%s: the acknowledged increments", k)
	}
	gotBig, err := redis.Bytes(dst.Do(ctx, "GET", "big"))
	require.NoError(t, err)
	assert.True(t, string(big) == string(gotBig), "the 24 MB value arrives whole")
	members, err := redis.Strings(dst.Do(ctx, "SMEMBERS", "ty"))
	require.NoError(t, err)
	assert.Equal(t, []string{"member"}, members, "the set that replaced the string")
	for k, ttl := range map[string]func(int64) bool{
		"exp:persist": func(p int64) bool { return p == -1 },
		"exp:extend":  func(p int64) bool { return p > 500000 && p <= 600000 },
		"{rn}:dst":    func(p int64) bool { return p > 0 && p <= 600000 },
	} {
		p, err := redis.Int64(dst.Do(ctx, "PTTL", k))
		require.NoError(t, err)
		assert.True(t, ttl(p), "PTTL of %s: %d", k, p)
	}
	// The expired and deleted keys are nowhere.
	gone := []string{"exp:gone", "exp:shorten", "exp:past", "exp:pxat", "del", "{rn}:src", "mv"}
	waitFor(t, 30*time.Second, "the short expiries", func() bool {
		n, err := redis.Int(dst.Do(ctx, "EXISTS", "exp:pxat"))
		return err == nil && n == 0
	})
	for _, s := range append([]*redistest.Server{servers[0]}, news...) {
		// KEYS, which a cluster's master answers for any slot, and
		// which leaves out a key past its expiry.
		ks, err := redis.Strings(newRawConn(t, s).Do("KEYS", "*"))
		require.NoError(t, err)
		for _, k := range gone {
			assert.NotContains(t, ks, k, "%s is back on %s", k, s.Addr)
		}
	}
	if !toCluster {
		dst1 := newRawConn(t, servers[1])
		_, err = dst1.Do("SELECT", 1)
		require.NoError(t, err)
		mv, err := redis.String(dst1.Do("GET", "mv"))
		require.NoError(t, err)
		assert.Equal(t, "m", mv, "MOVE took the key to database 1 of its new owner")
	}
	// Nothing else on the new servers.
	size := 0
	for _, s := range news {
		n, err := redis.Int(newRawConn(t, s).Do("DBSIZE"))
		require.NoError(t, err)
		size += n
	}
	assert.Equal(t, len(want)+counters+2, size, "the new servers' keys: the strings, the counters, big and ty")
}

// newRawConnErr dials s, or returns nil.
func newRawConnErr(s *redistest.Server) redis.Conn {
	c, err := redis.Dial("tcp", s.Addr)
	if err != nil {
		return nil
	}
	return c
}

// requireOnlyFence fails unless database db of s holds no key but the
// fence's markers.
func requireOnlyFence(t *testing.T, s *redistest.Server, db int) {
	t.Helper()
	c, err := redis.Dial("tcp", s.Addr, redis.DialDatabase(db))
	require.NoError(t, err)
	defer c.Close()
	keys, err := redis.Strings(c.Do("KEYS", "*"))
	require.NoError(t, err)
	for _, k := range keys {
		assert.True(t, shard.IsFenceKey(k), "%q left in database %d of %s", k, db, s.Addr)
	}
}
