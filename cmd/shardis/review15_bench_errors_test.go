package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardis/shardis/bench/e2e"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run in which operations failed prints its figures and errors, and
// exits non-zero: a script reading the JSON or the exit status must not
// take a run whose commands failed for a measurement.
func TestReview15BenchE2EFailedOperationsExitNonZero(t *testing.T) {
	// The server knows MSET under another name only, so that every MSET
	// fails and everything else works.
	srv := redistest.StartNTB(t, 1, redistest.Options{Args: []string{"--rename-command", "MSET", "MSET-ELSEWHERE"}})[0]
	cfg := filepath.Join(t.TempDir(), "ring.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "mode: ring\nshards:\n  - addr: %s\n    name: s1\n", srv.Addr), 0o644))

	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%t", asJSON), func(t *testing.T) {
			args := []string{"bench", "e2e", "--config", cfg, "--duration", "50ms", "--callers", "",
				"--pipelines", "", "--multi", "10"}
			if asJSON {
				args = append(args, "--json")
			}
			code, out, errOut := benchCLI(context.Background(), "", args...)
			assert.Equal(t, 1, code, "exit status of a run with failed operations: %s", errOut)
			assert.Contains(t, errOut, "operations failed")
			if asJSON {
				var rep e2e.Report
				require.NoError(t, json.Unmarshal([]byte(out), &rep), "stdout is still one JSON document")
				require.Len(t, rep.Results, 2)
				assert.Positive(t, rep.Results[0].Errors, "MSET")
				assert.Zero(t, rep.Results[1].Errors, "MGET: %s", rep.Results[1].FirstError)
			} else {
				assert.Contains(t, out, "MSET 10", "the table is printed")
				assert.Contains(t, out, "errors, first:")
			}
		})
	}
}
