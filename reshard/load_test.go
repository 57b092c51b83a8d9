package reshard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	loadProcs      = 2
	loadGoroutines = 8
	preKeys        = 20   // per goroutine
	bulkKeys       = 6000 // written before the move, besides the counters
)

// TestMoveUnderLoad moves keys while two client processes of eight
// goroutines each run a mix of commands in migration mode. Nothing may
// fail, every acknowledged write must survive with its exact value,
// counters must equal their acknowledged increments, TTLs must be within
// a second, and Verify must be clean.
func TestMoveUnderLoad(t *testing.T) {
	redistest.Require(t)
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	names := []string{"s0", "s1", "s2", "s3"}
	three := ringURL(servers[:3], names[:3], nil)
	four := ringURL(servers, names, nil)
	reweighted := ringURL(servers[:3], names[:3], []int{3, 1, 1})
	cases := []struct {
		name      string
		from, to  string
		cluster   bool // to is a fresh 3-master cluster
		killMover bool // SIGKILL a first `shardis reshard` at a random point, then run it again
		live      bool // the load's clients start on from alone and call StartMigration under load
	}{
		{name: "grow 3 to 4", from: three, to: four},
		{name: "shrink 4 to 3", from: four, to: three},
		{name: "reweight", from: three, to: reweighted},
		{name: "ring to cluster", from: three, cluster: true},
		{name: "ring to cluster at run time", from: three, cluster: true, live: true},
		{name: "mover killed and run again", from: three, to: four, killMover: true},
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range servers {
				_, err := s.Do("FLUSHALL")
				require.NoError(t, err)
			}
			to := tc.to
			if tc.cluster {
				cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
				to = clusterURL(cl)
			}
			runUnderLoad(t, fmt.Sprintf("u%d", ci), tc.from, to, tc.killMover, tc.live, servers)
		})
	}
}

func runUnderLoad(t *testing.T, prefix, fromURL, toURL string, killMover, live bool, servers []*redistest.Server) {
	ctx := context.Background()
	if killMover {
		shardisCLI(t) // built before the load starts, not competing with it for the CPU
	}
	from, to := mustParse(t, fromURL), mustParse(t, toURL)
	// Data that exists before the move: the counters the load increments
	// and bulk keys that only the mover moves.
	prefillLoadKeys(t, from, prefix, bulkKeys)

	dir := t.TempDir()
	stop := filepath.Join(dir, "stop")
	procs := make([]*exec.Cmd, loadProcs)
	outs := make([]*bytes.Buffer, loadProcs)
	readies := make([]string, loadProcs)
	for p := range procs {
		readies[p] = filepath.Join(dir, fmt.Sprintf("ready%d", p))
		spec := loadSpec{From: fromURL, To: toURL, Prefix: fmt.Sprintf("%s%d", prefix, p),
			Goroutines: loadGoroutines, PreKeys: preKeys, Ready: readies[p], Stop: stop, Live: live}
		procs[p], outs[p] = startLoadProc(t, loadEnv, spec)
	}
	stopped := false
	stopLoad := func() {
		if stopped {
			return
		}
		stopped = true
		stopLoadProcs(t, stop, procs)
	}
	t.Cleanup(stopLoad)
	for _, f := range readies {
		waitFor(t, 60*time.Second, "the load generators", func() bool { _, err := os.Stat(f); return err == nil })
	}

	if killMover {
		// The real CLI, SIGKILLed at a random point, then run again to its
		// end: it must finish the move and verify clean.
		killCLIMoverAtRandom(t, testRand(t), fromURL, toURL)
		out := runCLIMover(t, fromURL, toURL)
		assert.Contains(t, out, " 0 misplaced", "the second run verifies clean")
	}
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, KeysPerSecond: 4000})
	require.NoError(t, err)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	if !killMover {
		assert.Positive(t, rep.Moved)
	}
	time.Sleep(200 * time.Millisecond) // some load after the move too
	stopLoad()

	all := newLoadResult()
	for p, out := range outs {
		var r loadResult
		require.NoError(t, json.Unmarshal(out.Bytes(), &r), "result of load generator %d", p)
		all.merge(&r)
	}
	t.Logf("load: %d operations, %d failed", all.Ops, all.Failures)
	require.Zero(t, all.Failures, "failed operations: %v", all.Errors)
	require.Greater(t, all.Ops, int64(1000))

	// Everything the load acknowledged is there, read by a client on the
	// new topology alone.
	c := newClient(t, to)
	for p := 0; p < loadProcs; p++ {
		for g := 0; g < loadGoroutines; g++ {
			for k := 0; k < preKeys; k++ {
				key := fmt.Sprintf("pre:%s%d:%d:%d", prefix, p, g, k)
				if _, ok := all.Counters[key]; !ok {
					all.Counters[key] = 1000
				}
			}
		}
	}
	for k, want := range all.Counters {
		got, err := redis.Int64(c.Do(ctx, "GET", k))
		require.NoError(t, err, k)
		assert.Equal(t, want, got, "counter %s", k)
	}
	for k, fields := range all.Hashes {
		got, err := redis.Int64Map(c.Do(ctx, "HGETALL", k))
		require.NoError(t, err)
		assert.Equal(t, fields, got, "hash %s", k)
	}
	for k, want := range all.Lists {
		got, err := redis.Int64(c.Do(ctx, "LLEN", k))
		require.NoError(t, err)
		assert.Equal(t, want, got, "list %s", k)
	}
	for k, setAt := range all.TTLs {
		pttl, err := redis.Int64(c.Do(ctx, "PTTL", k))
		require.NoError(t, err)
		want := 60000 - (time.Now().UnixMilli() - setAt)
		assert.InDelta(t, want, pttl, 1000, "TTL of %s", k)
	}
	for k, want := range all.Strings {
		got, err := redis.String(c.Do(ctx, "GET", k))
		require.NoError(t, err, k)
		assert.Equal(t, want, got, "string %s", k)
	}
	for i := 0; i < bulkKeys; i += 13 {
		got, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("bulk:%s:%d", prefix, i)))
		require.NoError(t, err)
		assert.Equal(t, i, got)
	}
	requireVerifiedOnEvery(t, to, servers, bulkKeys)
}
