package reshard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A library caller that gives the processes' config as To, with its
// Migration.Addrs, and no Options.Addrs: the mover's own MIGRATEs go
// where the processes' go (the mapped address), as the CLI's do and as
// arming's probe does, not to the address the mover dials.
func TestReview14MoveTakesToMigrationAddrs(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := mustParse(t, ringURL(servers[:1], []string{"a"}, nil))
	to := mustParse(t, ringURL(servers[1:2], []string{"b"}, nil))
	f := from
	// The old node cannot reach the new one at the mapped address:
	// MIGRATE fails there, and the mover falls back to DUMP/RESTORE.
	to.Migration = &shard.Migration{From: &f, Addrs: map[string]string{servers[1].Addr: "127.0.0.1:1"}}
	for i := range 20 {
		_, err := servers[0].Do("SET", fmt.Sprint("maddrs:", i), "v")
		require.NoError(t, err)
	}
	rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true, SkipProbe: true})
	require.NoError(t, err)
	assert.EqualValues(t, 20, rep.Moved)
	n, err := servers[1].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, "20", n)
	stats, err := servers[1].Do("INFO", "commandstats")
	require.NoError(t, err)
	assert.True(t, strings.Contains(stats, "cmdstat_evalsha:"),
		"the keys were restored by the mover (its MIGRATE went to the mapped address): %s", stats)
}
