package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9ReshardTakesTheMigrationAddrs: the processes' config of step
// 1 (the new topology with its migration block) may map a new node's
// address to the one the old nodes reach it at (migration.addrs), for
// MIGRATE, which connects from server to server. Given that file as --to,
// the mover ignored the map and sent MIGRATE to the address it dials
// itself, which the old nodes may not reach (each batch then waits out
// MIGRATE's timeout), or may reach as another server. Here the map names
// an address where nothing listens: MIGRATE must go there and fail, and
// the batch move through the mover (DUMP/RESTORE, an EVALSHA on the new
// node), rather than MIGRATE straight to the address the mover dials.
// Arming probes MIGRATE there first, as the processes will send it, and
// refuses (status 1, nothing armed, nothing moved); --skip-probe arms
// without the probe.
func TestReview9ReshardTakesTheMigrationAddrs(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	toFile := writeConfig(t, fmt.Sprintf("url: %q\nmigration:\n  from: %q\n  addrs: {%q: \"127.0.0.1:1\"}\n",
		fmt.Sprintf("redis-ring://%s?names=b", servers[1].Addr), from, servers[1].Addr))
	for i := range 20 {
		_, err := servers[0].Do("SET", fmt.Sprint("addrs:", i), "v")
		require.NoError(t, err)
	}
	for _, verb := range [][]string{{"--arm"}, {"--yes", "--quiet"}} {
		args := append([]string{"reshard", "--from", from, "--to", toFile}, verb...)
		code, _, errOut := runCLI(t, "", args...)
		require.Equal(t, 1, code, errOut)
		assert.Contains(t, errOut, "cannot MIGRATE to new node b at 127.0.0.1:1", verb)
		assert.Contains(t, errOut, "not armed", verb)
		n, err := servers[1].Do("DBSIZE")
		require.NoError(t, err)
		assert.Equal(t, "0", n, "nothing moved")
		keys, err := servers[0].Do("KEYS", "shardis:migration:*")
		require.NoError(t, err)
		assert.Empty(t, keys, "neither the fence's marker nor a probe key")
	}
	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", toFile, "--yes", "--quiet", "--timeout", "2s", "--skip-probe")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "verify: 20 keys scanned, 0 misplaced")
	stats, err := servers[1].Do("INFO", "commandstats")
	require.NoError(t, err)
	assert.True(t, strings.Contains(stats, "cmdstat_evalsha:"),
		"the keys were restored by the mover (MIGRATE went to the mapped address): %s", stats)
}
