package shardisotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ringTelemetry is an instrumented ring client over servers with
// in-memory exporters.
func ringTelemetry(t *testing.T, servers []*redistest.Server, opts ...shardisotel.Option) *telemetry {
	t.Helper()
	cfg := shard.Config{Pool: pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second}}
	cfg.Health.Interval = -1
	for _, s := range servers {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: s.Addr, Addr: s.Addr, Weight: 1})
	}
	return instrumented(t, cfg, opts...)
}

// TestReview3ModuleCommandsHaveTheirOperation: a module's command keeps
// its name as db.operation.name and span name (here SET renamed JSON.SET,
// learned from COMMAND INFO, and FT.SEARCH sent with DoKey), instead of
// OTHER for every one, so a user of modules can tell them apart; a name
// that is no command stays OTHER.
func TestReview3ModuleCommandsHaveTheirOperation(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{Args: []string{"--rename-command", "SET", "JSON.SET"}})
	tel := ringTelemetry(t, []*redistest.Server{s})
	ctx := context.Background()

	_, err := tel.c.Do(ctx, "json.set", "r3m:k", "v")
	require.NoError(t, err)
	_, err = tel.c.DoKey(ctx, "r3m:k", "FT.SEARCH", "idx", "*")
	require.Error(t, err)
	_, err = tel.c.DoKey(ctx, "r3m:k", "user:42:get")
	require.Error(t, err)

	names := map[string]int{}
	for _, sp := range tel.spans.Ended() {
		names[sp.Name()+" "+attrs(sp.Attributes())["db.operation.name"]]++
	}
	assert.Equal(t, map[string]int{"JSON.SET JSON.SET": 1, "FT.SEARCH FT.SEARCH": 1, "OTHER OTHER": 1}, names)
	assert.Equal(t, map[string]uint64{
		s.Addr + " JSON.SET ok":            1,
		s.Addr + " FT.SEARCH server_error": 1,
		s.Addr + " OTHER server_error":     1,
	}, durationSeries(t, tel.reader))
}
