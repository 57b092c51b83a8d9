package reshard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview15MoveOffAFullOldNodeSaysWhatToDo: an old node over its
// maxmemory under noeviction (a node full, the usual reason to add one)
// refuses every write: the probe's throwaway key, and the fence's marker
// with SkipProbe too. The mover failed with the server's bare "OOM
// command not allowed" (without the probe, not even saying what it
// wrote), which neither says that the mover's own few bytes were refused
// nor what to do. The error matches ErrOldNodeFull, names the node and
// says how to go on; nothing is armed, and once the node has room the
// move runs.
func TestReview15MoveOffAFullOldNodeSaysWhatToDo(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := mustParse(t, ringURL(servers[:1], []string{"s0"}, nil))
	to := mustParse(t, ringURL(servers, []string{"s0", "s1"}, nil))
	fillRandomValues(t, servers[0].Addr, "full:", 200, 10<<10)
	_, err := servers[0].Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	require.NoError(t, err)
	_, err = servers[0].Do("CONFIG", "SET", "maxmemory", "1mb")
	require.NoError(t, err)
	for _, skip := range []bool{false, true} {
		_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipProbe: skip})
		require.Error(t, err, "skip probe %v", skip)
		t.Logf("skip probe %v: %v", skip, err)
		assert.True(t, errors.Is(err, reshard.ErrOldNodeFull), "skip probe %v: %v", skip, err)
		var ne *shard.NodeError
		if assert.ErrorAs(t, err, &ne) {
			assert.Equal(t, servers[0].Addr, ne.Node.Addr)
		}
		assert.Contains(t, err.Error(), "CONFIG SET maxmemory")
		assert.NotContains(t, err.Error(), "skip", "skipping the probe does not help")
		keys, err := servers[0].Do("DBSIZE")
		require.NoError(t, err)
		assert.Equal(t, "200", keys, "skip probe %v: nothing written, nothing moved", skip)
	}
	_, err = servers[0].Do("CONFIG", "SET", "maxmemory", "0")
	require.NoError(t, err)
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
	require.NoError(t, err)
	assert.Positive(t, rep.Moved)
}
