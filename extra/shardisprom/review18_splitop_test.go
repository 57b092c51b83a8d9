package shardisprom_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview18SplitMGETIsObservedAsMGET: one MGET over keys of several
// slots on each master was observed as a PIPELINE on every master it
// reached (each master's part of several slots is one batch): the
// histogram counted pipelines the caller never sent. Each part is now an
// MGET observation.
func TestReview18SplitMGETIsObservedAsMGET(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	d := shardisprom.NewDurations(nil, nil)
	ctx := context.Background()
	cfg := shard.Config{
		Mode:  shard.ModeCluster,
		Seeds: rc.Seeds(),
		Pool:  pool.Options{DialTimeout: 3 * time.Second, ReadTimeout: 2 * time.Second},
		Hooks: d.Hooks(),
	}
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	// Keys of distinct slots, several per master.
	var keys []any
	slots := map[int]bool{}
	for i := 0; len(keys) < 30; i++ {
		k := fmt.Sprintf("r18mget:%d", i)
		if s := cluster.Slot(k); !slots[s] {
			slots[s] = true
			keys = append(keys, k)
		}
	}
	_, err = c.Do(ctx, "MGET", keys...)
	require.NoError(t, err)

	got := durationSeries(t, d)
	require.NotEmpty(t, got)
	total := uint64(0)
	for series, n := range got {
		assert.Regexp(t, `^\S+ MGET ok$`, series, "every observation of the MGET's parts is an MGET")
		total += n
	}
	assert.LessOrEqual(t, total, uint64(len(rc.Masters())), "one observation per master reached: %v", got)
}
