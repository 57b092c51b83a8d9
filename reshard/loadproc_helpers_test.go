package reshard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prefillLoadKeys writes, on the old topology, the counters that the
// load increments (1000 each) and bulk keys only the mover moves.
func prefillLoadKeys(t *testing.T, from shard.Config, prefix string, bulk int) {
	t.Helper()
	c := newClient(t, from)
	pl := c.Pipeline()
	for p := 0; p < loadProcs; p++ {
		for g := 0; g < loadGoroutines; g++ {
			for k := 0; k < preKeys; k++ {
				pl.Send("SET", fmt.Sprintf("pre:%s%d:%d:%d", prefix, p, g, k), 1000)
			}
		}
	}
	for i := 0; i < bulk; i++ {
		pl.Send("SET", fmt.Sprintf("bulk:%s:%d", prefix, i), i)
	}
	res, err := pl.Exec(context.Background())
	require.NoError(t, err)
	require.Len(t, res, loadProcs*loadGoroutines*preKeys+bulk)
	for _, r := range res {
		require.NoError(t, r.Err)
	}
	c.Close() // a process on the old topology alone would stop the mover
}

// startLoadProc starts this test binary as a load generator, a separate
// client process: TestMain runs it as the one env names, with spec as
// JSON. What it prints (its result) goes to the returned buffer.
func startLoadProc(t *testing.T, env string, spec any) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+string(raw))
	out := new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	require.NoError(t, cmd.Start())
	return cmd, out
}

// stopLoadProcs creates stopFile, which every load generator watches, and
// waits a minute at the most for each of procs to exit cleanly; one that
// does not is killed and the test fails.
func stopLoadProcs(t *testing.T, stopFile string, procs []*exec.Cmd) {
	t.Helper()
	_ = os.WriteFile(stopFile, nil, 0o600)
	for _, cmd := range procs {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			assert.NoError(t, err, "load generator")
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("load generator did not stop")
		}
	}
}

// requireVerifiedOnEvery runs Verify of cfg over every one of servers
// (those cfg does not name too): no key may be misplaced, and at least
// atLeast keys scanned.
func requireVerifiedOnEvery(t *testing.T, cfg shard.Config, servers []*redistest.Server, atLeast int) {
	t.Helper()
	var nodes []string
	for _, s := range servers {
		nodes = append(nodes, s.Addr)
	}
	v, err := reshard.Verify(context.Background(), cfg, reshard.VerifyOptions{Nodes: nodes})
	require.NoError(t, err)
	assert.Zero(t, v.Misplaced, "misplaced: %v", v.Samples)
	assert.GreaterOrEqual(t, v.Scanned, int64(atLeast))
}
