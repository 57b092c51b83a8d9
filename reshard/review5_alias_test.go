package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// One server named by two spellings (localhost and 127.0.0.1) in the old
// and the new topology is not two nodes: its keys would "move" to
// themselves, and a MIGRATE to the server it runs on blocks that server
// until its timeout. The mover refuses such a pair of topologies, names
// both spellings, and leaves every key where it is.
func TestMoveRefusesOneServerUnderTwoAddresses(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	names := []string{"s0", "s1"}
	to := mustParse(t, ringURL(servers, names, nil))
	alias := "localhost:" + servers[0].Addr[strings.LastIndex(servers[0].Addr, ":")+1:]
	from := mustParse(t, strings.Replace(ringURL(servers, names, nil), servers[0].Addr, alias, 1))
	require.Equal(t, alias, from.Shards[0].Addr)
	const n = 200
	fill(t, to, "alias", n)

	for _, dry := range []bool{true, false} {
		mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := reshard.Move(mctx, reshard.Options{From: from, To: to, DryRun: dry, SkipClientCheck: true})
		cancel()
		require.Error(t, err, "dry run %v", dry)
		require.True(t, errors.Is(err, shard.ErrBadConfig), "dry run %v: %v; want ErrBadConfig", dry, err)
		require.Contains(t, err.Error(), alias)
		require.Contains(t, err.Error(), servers[0].Addr)
	}
	var total int
	for _, s := range servers {
		size, err := s.Do("DBSIZE")
		require.NoError(t, err)
		var k int
		_, err = fmt.Sscan(size, &k)
		require.NoError(t, err)
		total += k
	}
	require.Equal(t, n, total, "keys were lost")
}

// Verify with a --nodes entry that spells a topology's node another way
// scans that server once, under the topology's address: its keys are on
// their owner, not misplaced (before, every key there was reported twice,
// once as misplaced).
func TestVerifyScansAServerNamedTwiceOnce(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := mustParse(t, ringURL(servers, []string{"s0", "s1"}, nil))
	const n = 200
	fill(t, cfg, "twice", n)
	alias := "localhost:" + servers[0].Addr[strings.LastIndex(servers[0].Addr, ":")+1:]
	rep, err := reshard.Verify(ctx, cfg, reshard.VerifyOptions{Nodes: []string{alias}})
	require.NoError(t, err)
	require.EqualValues(t, n, rep.Scanned, "keys scanned")
	require.EqualValues(t, 0, rep.Misplaced, "misplaced: %v", rep.Samples)
}
