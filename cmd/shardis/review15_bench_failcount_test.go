package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/bench/e2e"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failCountServer starts a server that knows MSET under another name only
// (so that every MSET of the run fails and everything else works), with
// the deletion of keys refused too when noDel, and returns it with a ring
// config file naming it.
func failCountServer(t *testing.T, noDel bool) (*redistest.Server, string) {
	t.Helper()
	srv := redistest.StartNTB(t, 1, redistest.Options{Args: []string{"--rename-command", "MSET", "MSET-ELSEWHERE"}})[0]
	if noDel {
		_, err := srv.Do("ACL", "SETUSER", "default", "-del")
		require.NoError(t, err)
	}
	cfg := filepath.Join(t.TempDir(), "ring.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "mode: ring\nshards:\n  - addr: %s\n    name: s1\n", srv.Addr), 0o644))
	return srv, cfg
}

// reportedFailures returns the failed operations that the JSON report on
// stdout counts, and checks that some failed.
func reportedFailures(t *testing.T, out string) int64 {
	t.Helper()
	var rep e2e.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "stdout is one JSON document")
	var n int64
	for _, r := range rep.Results {
		n += r.Errors
	}
	require.Positive(t, n, "failed operations in the report")
	return n
}

// A run that ends with an error of its own (its keys not deleted, an
// interruption) still says how many operations failed.
func TestReview15BenchE2EErrorSaysFailedOperations(t *testing.T) {
	t.Run("keys not deleted, operations failed", func(t *testing.T) {
		_, cfg := failCountServer(t, true)
		code, out, errOut := benchCLI(context.Background(), "", "bench", "e2e", "--config", cfg, "--duration", "50ms",
			"--callers", "", "--pipelines", "", "--multi", "10", "--json")
		assert.Equal(t, 1, code, errOut)
		assert.Contains(t, errOut, e2e.KeyPrefix+":*:pf", "the cleanup failure is still said")
		n := reportedFailures(t, out)
		assert.Contains(t, errOut, fmt.Sprintf("operations failed: %d of them", n))
	})

	t.Run("keys not deleted, no operation failed", func(t *testing.T) {
		_, cfg := failCountServer(t, true)
		code, _, errOut := benchCLI(context.Background(), "", "bench", "e2e", "--config", cfg, "--duration", "50ms",
			"--callers", "1", "--pipelines", "", "--multi", "")
		assert.Equal(t, 1, code, errOut)
		assert.Contains(t, errOut, e2e.KeyPrefix+":*:pf", "the cleanup failure is still said")
		assert.Contains(t, errOut, "no operations failed in the 1 measurements made")
	})

	t.Run("interrupted, operations failed", func(t *testing.T) {
		srv, cfg := failCountServer(t, false)
		// The MSET case (every operation failing) runs first; the run is
		// interrupted once the MGET case has begun.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			defer cancel()
			for ctx.Err() == nil {
				info, err := srv.DoContext(ctx, "INFO", "commandstats")
				if err == nil && strings.Contains(info, "cmdstat_mget:") {
					return
				}
				select {
				case <-ctx.Done():
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		code, out, errOut := benchCLI(ctx, "", "bench", "e2e", "--config", cfg, "--duration", "1s",
			"--callers", "", "--pipelines", "", "--multi", "10", "--json")
		assert.Equal(t, 130, code, errOut) // interrupted first: run it again
		assert.Contains(t, errOut, "interrupted")
		n := reportedFailures(t, out)
		assert.Contains(t, errOut, fmt.Sprintf("operations failed: %d of them", n))
	})
}
