package reshard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultBulkKeys are written before the move besides the counters; only
// the mover moves them.
const faultBulkKeys = 4000

// TestShardKilledUnderLoad kills one shard (chosen at random, the seed is
// logged) with SIGKILL while the mover runs under the load of two client
// processes of eight goroutines, restarts it, and runs the mover again.
// While the shard is down, only operations on keys that it owns in the
// old or the new topology may fail, and only with an error that names it
// (a *shard.NodeError or a *shard.MigrateError); the other keys keep being
// served. No acknowledged write may be lost and no reply may be wrong: an
// operation whose outcome is unknown (the connection broke after it was
// sent) may or may not have been applied, so a counter must end between
// its acknowledged increments and those plus its unknown ones; a command
// refused before it was sent (a node marked down, a key that could not be
// moved) must not have been applied. After the second move, Verify is
// clean.
func TestShardKilledUnderLoad(t *testing.T) {
	ctx := context.Background()
	rng := testRand(t)
	// Persistence as a production shard has it: a restart keeps every
	// acknowledged write.
	servers := redistest.StartNTB(t, 4, redistest.Options{Args: []string{"--appendonly", "yes", "--appendfsync", "always"}})
	names := []string{"s0", "s1", "s2", "s3"}
	fromURL, toURL := ringURL(servers[:3], names[:3], nil), ringURL(servers, names, nil)
	from, to := mustParse(t, fromURL), mustParse(t, toURL)
	dead := servers[rng.IntN(len(servers))]
	t.Logf("shards %v at %v; the shard killed is %s (%s)", names, servers, dead.Addr, names[slices.Index(servers, dead)])

	prefix := "kf"
	prefillLoadKeys(t, from, prefix, faultBulkKeys)
	moving := dryRunMoves(t, from, to)
	load := startFaultLoad(t, faultSpec{From: fromURL, To: toURL, Prefix: prefix, Dead: dead.Addr})

	// The mover runs paced; the shard dies once it has moved a random
	// share of the keys.
	target := 1 + rng.Int64N(max(moving*6/10, 1))
	t.Logf("the shard is killed once the mover has moved %d of %d keys", target, moving)
	reached := make(chan struct{})
	var once sync.Once
	moveErr := make(chan error, 1)
	go func() {
		_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, KeysPerSecond: 1500,
			Progress: func(p reshard.Progress) {
				if p.Moved >= target {
					once.Do(func() { close(reached) })
				}
			}})
		moveErr <- err
	}()
	select {
	case <-reached:
	case err := <-moveErr:
		t.Fatalf("the mover ended before the shard was killed: %v", err)
	}
	killedAt := time.Now().UnixMilli()
	require.NoError(t, dead.Kill())
	select {
	case err := <-moveErr:
		// The mover stops on the dead shard's error, or finishes when
		// the shard had nothing more to do with it.
		var ne *shard.NodeError
		if err != nil {
			require.ErrorAs(t, err, &ne, "the mover's error")
			t.Logf("the mover stopped: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the mover did not stop")
	}
	// The load goes on with the shard down until every process has seen
	// operations fail.
	for _, f := range load.failed {
		waitFor(t, 30*time.Second, "the load to meet the dead shard", func() bool { _, err := os.Stat(f); return err == nil })
	}
	// The shard stays down at least half a second, so that whole 100 ms
	// ticks of the load's counts fall inside the outage (on a fast
	// machine the load meets the dead shard within 200 ms, and the outage
	// could end before a whole tick after the first 100 ms).
	time.Sleep(time.Until(time.UnixMilli(killedAt + 500)))
	restartedAt := time.Now().UnixMilli()
	require.NoError(t, dead.Restart())
	upAt := time.Now().UnixMilli()

	// Run the mover again, to its end.
	var rep *reshard.Report
	var err error
	waitFor(t, 30*time.Second, "the second mover", func() bool {
		rep, err = reshard.Move(ctx, reshard.Options{From: from, To: to})
		var ne *shard.NodeError
		if errors.As(err, &ne) && ne.Node.Addr == dead.Addr {
			return false // still loading its data
		}
		return true
	})
	if rep != nil && rep.Verify != nil {
		for _, m := range rep.Verify.Samples {
			t.Logf("misplaced: %s on %s, owned by %s, owned before by %s", m.Key, m.Node, m.Owner, owner(t, from, m.Key))
		}
	}
	require.NoError(t, err)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	res := load.stop(t)

	t.Logf("load: %d operations, %d failed (%d not sent, %d of unknown outcome); failures from +%dms to +%dms after the kill, restart from +%dms to +%dms",
		res.Ops, res.Failures, res.NotApplied, res.Unknown, res.FirstFail-killedAt, res.LastFail-killedAt, restartedAt-killedAt, upAt-killedAt)
	assert.Empty(t, res.Control)
	assert.Zero(t, res.Wrong, "wrong replies: %v", res.Samples)
	assert.Zero(t, res.Bad, "failures on keys the dead shard does not own, or of the wrong kind: %v", res.Samples)
	require.Positive(t, res.Failures, "operations on the dead shard's keys failed")
	assert.GreaterOrEqual(t, res.FirstFail, killedAt, "no failure before the kill: %v", res.Samples)
	// Once the shard answers again, its keys are served as soon as the
	// clients' health checks (every 200 ms) see it up.
	assert.Less(t, res.LastFail, upAt+5000, "failures end soon after the restart: %v", res.Samples)
	var served int64
	for tick, n := range res.OKByTick {
		if tick*100 >= killedAt+100 && (tick+1)*100 <= restartedAt {
			served += n
		}
	}
	assert.Positive(t, served, "the other keys were served while the shard was down")
	t.Logf("%d operations served while the shard was down", served)
	checkFaultEndState(t, to, prefix, res, servers)
}

// TestRollbackUnderLoad aborts a migration at half way under the load of
// two client processes of eight goroutines that follow the rollback
// protocol (docs/resharding.md): the mover stops at 50 %, every process
// calls AbortMigration, the mover runs in reverse (arming the reverse
// fence), every process calls FinishMigration once it sees it armed, and
// both fences are cleared. Nothing may fail, and the old topology must end
// with every acknowledged write, exact counters, TTLs within a second,
// nothing left on the shard that was being added, and Verify clean.
func TestRollbackUnderLoad(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	names := []string{"s0", "s1", "s2", "s3"}
	fromURL, toURL := ringURL(servers[:3], names[:3], nil), ringURL(servers, names, nil)
	from, to := mustParse(t, fromURL), mustParse(t, toURL)

	prefix := "rf"
	prefillLoadKeys(t, from, prefix, faultBulkKeys)
	moving := dryRunMoves(t, from, to)
	load := startFaultLoad(t, faultSpec{From: fromURL, To: toURL, Prefix: prefix, Abort: "abort", Finish: "finish"})

	mctx, cancel := context.WithCancel(ctx)
	// Paced, in small batches, so that the progress (every 200 ms) stops
	// it near half way.
	rep, err := reshard.Move(mctx, reshard.Options{From: from, To: to, KeysPerSecond: 500, Batch: 25,
		Progress: func(p reshard.Progress) {
			if p.Moved >= moving/2 {
				cancel()
			}
		}})
	cancel()
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, rep)
	t.Logf("the mover stopped after %d of %d keys", rep.Moved, moving)
	require.GreaterOrEqual(t, rep.Moved, moving/2)
	require.Less(t, rep.Moved, moving*3/4, "stopped near half way")
	n, err := strconvAtoi(servers[3].Do("DBSIZE"))
	require.NoError(t, err)
	require.Positive(t, n, "keys had moved to the shard being added")

	// Every process turns around; until the reverse fence is armed they
	// keep moving keys forward on touch.
	load.signal(t, "abort", load.aborted)
	back := moveBack(t, from, to, 30*time.Second)
	t.Logf("moved back: %d keys", back.Moved)
	// Every process on the old topology alone, then the markers go.
	load.signal(t, "finish", load.finished)
	require.NoError(t, reshard.ClearFence(ctx, to, from))
	require.NoError(t, reshard.ClearFence(ctx, from, to))
	res := load.stop(t)

	t.Logf("load: %d operations, %d failed", res.Ops, res.Failures)
	assert.Empty(t, res.Control)
	assert.Zero(t, res.Wrong, "wrong replies: %v", res.Samples)
	require.Zero(t, res.Failures, "failed operations: %v", res.Samples)
	for _, s := range servers {
		keys, err := s.Do("KEYS", "shardis:migration:*")
		require.NoError(t, err)
		assert.Empty(t, keys, "no marker left on %s", s.Addr)
	}
	n, err = strconvAtoi(servers[3].Do("DBSIZE"))
	require.NoError(t, err)
	assert.Zero(t, n, "nothing is left on the shard that was being added")
	checkFaultEndState(t, from, prefix, res, servers)
}

// dryRunMoves returns how many keys a move from -> to would move now.
func dryRunMoves(t *testing.T, from, to shard.Config) int64 {
	t.Helper()
	dry, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, DryRun: true})
	require.NoError(t, err)
	require.Positive(t, dry.Moved)
	return dry.Moved
}

// faultLoad is the running fault-tolerant load generators.
type faultLoad struct {
	dir                       string
	stopFile                  string
	procs                     []*exec.Cmd
	outs                      []*bytes.Buffer
	failed, aborted, finished []string // files each process creates
	stopped                   bool
	res                       *faultResult
}

// startFaultLoad starts loadProcs fault-tolerant load generators of
// loadGoroutines goroutines each, as spec says (Prefix is suffixed with
// the process's number; a non-empty Abort or Finish turns on the
// rollback protocol) and waits until every one is working.
func startFaultLoad(t *testing.T, spec faultSpec) *faultLoad {
	t.Helper()
	l := &faultLoad{dir: t.TempDir()}
	l.stopFile = filepath.Join(l.dir, "stop")
	rollback := spec.Abort != ""
	var readies []string
	for p := 0; p < loadProcs; p++ {
		s := spec
		s.Prefix = fmt.Sprintf("%s%d", spec.Prefix, p)
		s.Goroutines, s.PreKeys = loadGoroutines, preKeys
		s.Stop = l.stopFile
		file := func(name string) string { return filepath.Join(l.dir, fmt.Sprintf("%s%d", name, p)) }
		s.Ready, s.Failed = file("ready"), file("failed")
		readies, l.failed = append(readies, s.Ready), append(l.failed, s.Failed)
		if rollback {
			s.Abort, s.Finish = filepath.Join(l.dir, "abort"), filepath.Join(l.dir, "finish")
			s.Aborted, s.Finished = file("aborted"), file("finished")
			l.aborted, l.finished = append(l.aborted, s.Aborted), append(l.finished, s.Finished)
		}
		cmd, out := startLoadProc(t, faultLoadEnv, s)
		l.procs, l.outs = append(l.procs, cmd), append(l.outs, out)
	}
	t.Cleanup(func() { l.stop(t) })
	for _, f := range readies {
		waitFor(t, 60*time.Second, "the load generators", func() bool { _, err := os.Stat(f); return err == nil })
	}
	return l
}

// signal creates the file name that every load generator watches and
// waits until each has created its file in acks.
func (l *faultLoad) signal(t *testing.T, name string, acks []string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(l.dir, name), nil, 0o600))
	for _, f := range acks {
		waitFor(t, 30*time.Second, "the load generators to "+name, func() bool { _, err := os.Stat(f); return err == nil })
	}
}

// stop ends the load and returns what every process saw, merged.
func (l *faultLoad) stop(t *testing.T) *faultResult {
	t.Helper()
	if l.stopped {
		return l.res
	}
	l.stopped = true
	stopLoadProcs(t, l.stopFile, l.procs)
	l.res = newFaultResult()
	for p, out := range l.outs {
		var r faultResult
		if !assert.NoError(t, json.Unmarshal(out.Bytes(), &r), "result of load generator %d", p) {
			continue
		}
		l.res.merge(&r)
	}
	return l.res
}

// checkFaultEndState reads, through a client on cfg alone, everything the
// load acknowledged: every counter, hash field and list length within its
// span (exact when nothing failed), every string one of its possible
// values, every TTL within a second of its possible writes, and every
// bulk key; then Verify must find every key on its owner.
func checkFaultEndState(t *testing.T, cfg shard.Config, prefix string, res *faultResult, servers []*redistest.Server) {
	t.Helper()
	ctx := context.Background()
	c := newClient(t, cfg)
	for p := 0; p < loadProcs; p++ {
		for g := 0; g < loadGoroutines; g++ {
			for k := 0; k < preKeys; k++ {
				key := fmt.Sprintf("pre:%s%d:%d:%d", prefix, p, g, k)
				if _, ok := res.Counters[key]; !ok {
					res.Counters[key] = span{1000, 1000}
				}
			}
		}
	}
	require.Len(t, res.Counters, loadProcs*loadGoroutines*(preKeys+20+5), "counters")
	uncertain := 0
	inSpan := func(what, key string, s span, got int64) {
		if s.Lo != s.Hi {
			uncertain++
		}
		assert.True(t, s.Lo <= got && got <= s.Hi, "%s %s = %d, acknowledged %d, at most %d", what, key, got, s.Lo, s.Hi)
	}
	for k, s := range res.Counters {
		got, err := redis.Int64(c.Do(ctx, "GET", k))
		require.NoError(t, err, k)
		inSpan("counter", k, s, got)
	}
	require.Len(t, res.Hashes, loadProcs*loadGoroutines, "hashes")
	for k, fields := range res.Hashes {
		got, err := redis.Int64Map(c.Do(ctx, "HGETALL", k))
		require.NoError(t, err)
		for f, s := range fields {
			inSpan("hash field", k+" "+f, s, got[f])
		}
	}
	require.Len(t, res.Lists, loadProcs*loadGoroutines, "lists")
	for k, s := range res.Lists {
		got, err := redis.Int64(c.Do(ctx, "LLEN", k))
		require.NoError(t, err)
		inSpan("list length", k, s, got)
	}
	t.Logf("%d counters, hash fields or lists ended in a range (operations of unknown outcome)", uncertain)
	require.NotEmpty(t, res.Strings)
	for k, vals := range res.Strings {
		got, err := redis.String(c.Do(ctx, "GET", k))
		if errors.Is(err, redis.ErrNil) {
			got, err = absent, nil
		}
		require.NoError(t, err, k)
		assert.Contains(t, vals, got, "string %s", k)
	}
	require.NotEmpty(t, res.TTLs)
	for k, ts := range res.TTLs {
		got, err := redis.String(c.Do(ctx, "GET", k))
		if errors.Is(err, redis.ErrNil) {
			got, err = absent, nil
		}
		require.NoError(t, err, k)
		assert.Contains(t, ts.Vals, got, "value of %s; its last writes: %q", k, ts.Log)
		if got == absent {
			continue
		}
		pttl, err := redis.Int64(c.Do(ctx, "PTTL", k))
		require.NoError(t, err)
		now := time.Now().UnixMilli()
		assert.True(t, 60000-(now-ts.Lo)-1000 <= pttl && pttl <= 60000-(now-ts.Hi)+1000,
			"TTL of %s: %d ms, written between %d and %d ms ago", k, pttl, now-ts.Hi, now-ts.Lo)
	}
	const chunk = 500
	for i := 0; i < faultBulkKeys; i += chunk {
		keys := make([]any, 0, chunk)
		for j := i; j < min(i+chunk, faultBulkKeys); j++ {
			keys = append(keys, fmt.Sprintf("bulk:%s:%d", prefix, j))
		}
		vals, err := redis.Values(c.Do(ctx, "MGET", keys...))
		require.NoError(t, err)
		require.Len(t, vals, len(keys))
		for j, v := range vals {
			n, err := redis.Int(v, nil)
			if assert.NoError(t, err, "%s", keys[j]) {
				assert.Equal(t, i+j, n, "%s", keys[j])
			}
		}
	}
	requireVerifiedOnEvery(t, cfg, servers, faultBulkKeys)
}
