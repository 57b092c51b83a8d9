package shardisprom_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// During a migration the collector reports the phase and each step the
// client took, labelled with both topologies; without one, neither metric.
func TestCollectorMigration(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	cfg := func(n int) shard.Config { return ringOver(servers[:n], "shard", shard.HealthOptions{Interval: -1}) }
	from, to := cfg(3), cfg(4)
	plain, err := shard.New(ctx, to)
	require.NoError(t, err)
	defer plain.Close()
	require.Equal(t, 0, testutil.CollectAndCount(shardisprom.NewCollector(plain, nil), "shardis_migration_phase", "shardis_migration_steps_total"))

	// Keys that move, written at their old owners.
	rf, err := ring.New(from.RingConfig())
	require.NoError(t, err)
	rt, err := ring.New(to.RingConfig())
	require.NoError(t, err)
	var moving []string
	for i := 0; len(moving) < 4 && i < 10000; i++ {
		k := fmt.Sprint("pm:", i)
		if old := rf.Shards()[rf.Locate(k)].Addr; old != rt.Shards()[rt.Locate(k)].Addr {
			for _, s := range servers {
				if s.Addr == old {
					_, err := s.Do("SET", k, "1")
					require.NoError(t, err)
				}
			}
			moving = append(moving, k)
		}
	}
	require.Len(t, moving, 4)

	f := from
	mcfg := to
	mcfg.Migration = &shard.Migration{From: &f, Armed: true}
	c, err := shard.New(ctx, mcfg)
	require.NoError(t, err)
	defer c.Close()
	for _, cmd := range [][]any{{"GET", moving[0]}, {"SET", moving[1], "2"}, {"INCR", moving[2]}, {"INCR", moving[3]}, {"GET", moving[3]}} {
		_, err := c.Do(ctx, cmd[0].(string), cmd[1:]...)
		require.NoError(t, err, "%v", cmd)
	}

	labels := fmt.Sprintf(`from=%q,to=%q`, shard.TopologyID(from), shard.TopologyID(to))
	want := `# HELP shardis_migration_phase While the client migrates: 0 routing by the old topology, 1 fenced, 2 armed (moving keys on touch).
# TYPE shardis_migration_phase gauge
shardis_migration_phase{` + labels + `} 2
# HELP shardis_migration_steps_total While the client migrates, by step: move (a MIGRATE that moved keys), overwrite (a blind overwrite, no MIGRATE), old_read (a read answered at the old owner), busy_key (an old copy deleted, the new owner had the key), failure (a move or delete that failed).
# TYPE shardis_migration_steps_total counter
`
	for _, s := range []struct {
		step string
		n    int
	}{{"busy_key", 0}, {"failure", 0}, {"move", 2}, {"old_read", 1}, {"overwrite", 1}} {
		want += fmt.Sprintf("shardis_migration_steps_total{from=%q,step=%q,to=%q} %d\n", shard.TopologyID(from), s.step, shard.TopologyID(to), s.n)
	}
	require.NoError(t, testutil.CollectAndCompare(shardisprom.NewCollector(c, nil), strings.NewReader(want),
		"shardis_migration_phase", "shardis_migration_steps_total"))
}
