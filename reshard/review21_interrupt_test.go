package reshard_test

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview21MoverCancelledAtEachPhaseThenRunAgain grows a ring of three
// servers to four while an application in migration mode increments
// counters, cancels the mover's context at one phase of its run (before
// the fence is set, before the scan, once a page is sorted, a few pages
// in, in the key-by-key fallback after BUSYKEY, as a DUMP/RESTORE batch
// begins, once it paused the old node's writes, once it restored its keys
// and before it deleted the old copies, once the scan is over and before
// the verification), then runs it again to its end. The cancelled run
// must fail with context.Canceled; the second must verify clean, and the
// end state must be exact: each key once, at its owner in the new ring,
// with its value (the new owner's newer copies kept), every acknowledged
// increment counted, and no key counted as moved twice over both runs
// (nor uncounted, but for the batches in flight at the cancel).
func TestReview21MoverCancelledAtEachPhaseThenRunAgain(t *testing.T) {
	type hooks struct {
		set   func(cancel func())
		clear func()
	}
	page := func(at int32) hooks {
		return hooks{func(cancel func()) {
			var n atomic.Int32
			reshard.SetTestHookPage(func(shard.Node) {
				if n.Add(1) == at {
					cancel()
				}
			})
		}, func() { reshard.SetTestHookPage(nil) }}
	}
	for _, tt := range []struct {
		name string
		dump bool
		h    hooks
	}{
		{"before the fence is set", false, hooks{func(cancel func()) { reshard.SetTestHookBeforeFenceSet(cancel) }, func() { reshard.SetTestHookBeforeFenceSet(nil) }}},
		{"before the scan", false, hooks{func(cancel func()) { reshard.SetTestHookScan(func(shard.Node) { cancel() }) }, func() { reshard.SetTestHookScan(nil) }}},
		{"first page sorted", false, page(1)},
		{"a few pages in", false, page(4)},
		{"a few pages in, DUMP/RESTORE", true, page(4)},
		{"key by key after BUSYKEY", false, hooks{func(cancel func()) { reshard.SetTestHookEach(func(shard.Node, string) { cancel() }) }, func() { reshard.SetTestHookEach(nil) }}},
		{"DUMP/RESTORE batch begins", true, hooks{func(cancel func()) {
			var n atomic.Int32
			reshard.SetTestHookDump(func(shard.Node, []string) {
				if n.Add(1) == 2 {
					cancel()
				}
			})
		}, func() { reshard.SetTestHookDump(nil) }}},
		{"old node's writes paused", true, hooks{func(cancel func()) {
			var n atomic.Int32
			reshard.SetTestHookPaused(func() {
				if n.Add(1) == 2 {
					cancel()
				}
			})
		}, func() { reshard.SetTestHookPaused(nil) }}},
		{"restored, old copies not deleted", true, hooks{func(cancel func()) {
			var n atomic.Int32
			reshard.SetTestHookDelete(func(shard.Node, []string) {
				if n.Add(1) == 2 {
					cancel()
				}
			})
		}, func() { reshard.SetTestHookDelete(nil) }}},
		{"scan over, before the verification", false, hooks{func(cancel func()) { reshard.SetTestHookDrained(func(shard.Node) { cancel() }) }, func() { reshard.SetTestHookDrained(nil) }}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runInterrupted(t, tt.dump, tt.h.set, tt.h.clear)
		})
	}
}

func runInterrupted(t *testing.T, dump bool, set func(cancel func()), clearHook func()) {
	const (
		keys     = 1500
		counters = 4
		busyKeys = 3
	)
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	names := []string{"s0", "s1", "s2", "s3"}
	from := mustParse(t, ringURL(servers[:3], names[:3], nil))
	to := mustParse(t, ringURL(servers, names, nil))
	fill(t, from, "k", keys)
	fromOwner, toOwner := ownerFunc(t, from), ownerFunc(t, to)
	want := map[string]string{} // key: value
	var moving []string
	for i := range keys {
		k := fmt.Sprintf("k:%d", i)
		want[k] = fmt.Sprint(i)
		if fromOwner(k) != toOwner(k) {
			moving = append(moving, k)
		}
	}
	require.Greater(t, len(moving), counters+busyKeys+100, "keys that move")
	sort.Strings(moving)
	// Newer copies at the new owners of a few moving keys: they win.
	for _, k := range moving[:busyKeys] {
		c := newRawConnAt(t, toOwner(k))
		_, err := c.Do("SET", k, "newer")
		require.NoError(t, err)
		want[k] = "newer"
	}
	counterKeys := moving[busyKeys : busyKeys+counters]

	app := to
	f := from
	app.Migration = &shard.Migration{From: &f, Armed: true}
	client := newClient(t, app)
	incr := startIncrementing(t, ctx, client, counterKeys)

	opts := reshard.Options{From: from, To: to, Dump: dump, SkipClientCheck: true, ScanCount: 100, Batch: 20}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cancelled atomic.Bool
	set(func() {
		cancelled.Store(true)
		cancel()
	})
	start := time.Now()
	rep1, err := reshard.Move(cctx, opts)
	took1 := time.Since(start)
	clearHook()
	require.True(t, cancelled.Load(), "the hook cancelled the run")
	require.ErrorIs(t, err, context.Canceled, "the cancelled run")
	var moved1, busy1 int64
	if rep1 != nil {
		moved1, busy1 = rep1.Moved, rep1.Busy
	}

	start = time.Now()
	rep2, err := reshard.Move(ctx, opts)
	t.Logf("the cancelled run took %v, the second %v", took1, time.Since(start))
	require.NoError(t, err, "the run again")
	require.NotNil(t, rep2.Verify)
	assert.Zero(t, rep2.Verify.Misplaced)
	incr.stop()
	require.Nil(t, incr.failed(), "an increment failed")
	info, ok := client.Migration()
	require.True(t, ok)
	t.Logf("moving keys %d: the cancelled run moved %d (busy %d), the second %d (busy %d), the application %d",
		len(moving), moved1, busy1, rep2.Moved, rep2.Busy, info.Moves)
	// No key is counted twice. A batch whose MIGRATE was in flight when
	// the run was cancelled may have moved its keys with its reply
	// unread: those are moved (the end state below checks every key) but
	// not counted, at most a batch per old node.
	total := moved1 + rep2.Moved + info.Moves
	assert.LessOrEqual(t, total, int64(len(moving)-busyKeys), "no moving key counted twice")
	assert.GreaterOrEqual(t, total, int64(len(moving)-busyKeys-3*opts.Batch), "each moving key counted once, but for the batches in flight at the cancel")
	// A run cancelled while it settles a key the new owner has may have
	// deleted the old copy without reading the answer: not counted busy.
	assert.LessOrEqual(t, busy1+rep2.Busy, int64(busyKeys), "the newer copies kept, counted once at most")

	for i, k := range counterKeys {
		want[k] = fmt.Sprint(incr.acked(i) + int64(keyIndex(t, k)))
	}
	// Each server holds exactly the keys it owns in the new ring.
	onServer := map[string]map[string]string{}
	for k, v := range want {
		a := toOwner(k)
		if onServer[a] == nil {
			onServer[a] = map[string]string{}
		}
		onServer[a][k] = v
	}
	for _, s := range servers {
		c := newRawConn(t, s)
		ks, err := redis.Strings(c.Do("KEYS", "*"))
		require.NoError(t, err)
		got := map[string]string{}
		for _, k := range ks {
			if shard.IsFenceKey(k) {
				continue
			}
			v, err := redis.String(c.Do("GET", k))
			require.NoError(t, err, k)
			got[k] = v
		}
		exp := onServer[s.Addr]
		if exp == nil {
			exp = map[string]string{}
		}
		assert.Equal(t, exp, got, "the keys of %s", s.Addr)
	}
}

// keyIndex returns i of a key k:i.
func keyIndex(t *testing.T, k string) int {
	t.Helper()
	var i int
	_, err := fmt.Sscanf(k, "k:%d", &i)
	require.NoError(t, err)
	return i
}

// newRawConnAt dials addr for the test.
func newRawConnAt(t *testing.T, addr string) redis.Conn {
	t.Helper()
	c, err := redis.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestReview21CancelledDumpBatchDeletesTheOldCopiesItRestored: the
// mover's context is cancelled once a DUMP/RESTORE batch has restored
// its keys at the new node, before it deletes their old copies, in the
// first batch an old node runs (its delete script not loaded yet). The
// deletes, retried after the script's NOSCRIPT, ran under the cancelled
// context and failed: every key was left at both nodes, and counted
// moved by no one, though the mover had moved it. The batch now deletes
// what it restored, as it lifts its pause, whatever its context; the run
// then ends with context.Canceled.
func TestReview21CancelledDumpBatchDeletesTheOldCopiesItRestored(t *testing.T) {
	const n = 10
	servers, from, to := moveAll(t)
	fill(t, from, "c", n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	reshard.SetTestHookDelete(func(shard.Node, []string) {
		calls.Add(1)
		cancel()
	})
	defer reshard.SetTestHookDelete(nil)
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Dump: true, SkipClientCheck: true, Batch: n})
	require.EqualValues(t, 1, calls.Load(), "one batch restored")
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, rep)
	assert.EqualValues(t, n, rep.Moved, "the keys restored and deleted")
	requireOnlyFence(t, servers[0], 0)
	dst := newRawConn(t, servers[1])
	for i := range n {
		v, err := redis.Int(dst.Do("GET", fmt.Sprintf("c:%d", i)))
		require.NoError(t, err)
		assert.Equal(t, i, v)
	}
}

// ownerFunc returns a function that gives the address package ring (not
// the mover) places a key on in the ring cfg.
func ownerFunc(t *testing.T, cfg shard.Config) func(string) string {
	t.Helper()
	r, err := ring.New(cfg.RingConfig())
	require.NoError(t, err)
	return func(k string) string { return r.Shards()[r.Locate(k)].Addr }
}
