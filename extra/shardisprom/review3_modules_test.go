package shardisprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview3ModuleCommandsHaveTheirOperation: a module's command keeps
// its name as the operation label (here SET renamed JSON.SET, learned
// from COMMAND INFO, and FT.SEARCH sent with DoKey), instead of OTHER for
// every one, so a user of modules can tell them apart; a name that is no
// command stays OTHER.
func TestReview3ModuleCommandsHaveTheirOperation(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{Args: []string{"--rename-command", "SET", "JSON.SET"}})
	d := shardisprom.NewDurations(nil, nil)
	cfg := shard.Config{
		Shards: []ring.Shard{{Name: "s", Addr: s.Addr, Weight: 1}},
		Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second},
		Hooks:  d.Hooks(),
	}
	cfg.Health.Interval = -1
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	_, err = c.Do(ctx, "json.set", "r3m:k", "v")
	require.NoError(t, err)
	_, err = c.DoKey(ctx, "r3m:k", "FT.SEARCH", "idx", "*")
	require.Error(t, err)
	_, err = c.DoKey(ctx, "r3m:k", "user:42:get")
	require.Error(t, err)
	assert.Equal(t, map[string]uint64{
		s.Addr + " JSON.SET ok":                                     1,
		s.Addr + " FT.SEARCH server_error":                          1,
		s.Addr + " " + shardisprom.OtherOperation + " server_error": 1,
	}, durationSeries(t, d))
}
