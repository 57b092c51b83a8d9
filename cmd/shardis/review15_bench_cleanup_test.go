package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/shardis/shardis/bench/e2e"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run that cannot delete the keys it wrote on the user's servers prints
// its figures, says on stderr how many keys may remain under which names,
// and exits non-zero.
func TestReview15BenchE2ECleanupFailureExitsNonZero(t *testing.T) {
	srv := redistest.StartNTB(t, 1, redistest.Options{})[0]
	_, err := srv.Do("ACL", "SETUSER", "default", "-del") // the writes work, the deletion fails
	require.NoError(t, err)
	cfg := filepath.Join(t.TempDir(), "ring.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "mode: ring\nshards:\n  - addr: %s\n    name: s1\n", srv.Addr), 0o644))

	code, out, errOut := benchCLI(context.Background(), "", "bench", "e2e", "--config", cfg, "--duration", "50ms",
		"--callers", "1", "--pipelines", "", "--multi", "")
	assert.Equal(t, 1, code, "exit status of a run that left its keys: %s", errOut)
	assert.Contains(t, out, "single", "the table is printed")
	assert.Contains(t, errOut, e2e.KeyPrefix+":*:pf")
	assert.Contains(t, errOut, strconv.Itoa(e2e.Keyspace)+" keys")
	n, err := srv.Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(e2e.Keyspace), n, "keys on the server after the run")
}
