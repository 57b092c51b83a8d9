package shardisprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview21RefusedCredentialsAreAuth: a command that fails because the
// server refused the client's credentials counts with cause "auth", as
// the metric's help says, not as the server's WRONGPASS, which read as
// a command's own error reply; shard.ErrorCause says the same.
func TestReview21RefusedCredentialsAreAuth(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{Users: []redistest.User{{Name: "app", Password: password}}})
	d := shardisprom.NewDurations(nil, nil)
	cfg := shard.Config{
		Pool:   pool.Options{Username: "app", Password: "r21-Wr0ng-pw", DialTimeout: time.Second, ReadTimeout: time.Second},
		Health: shard.HealthOptions{Interval: -1},
		Hooks:  d.Hooks(),
		Shards: []ring.Shard{{Name: "only", Addr: s.Addr, Weight: 1}},
	}
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	_, err = c.Do(context.Background(), "GET", "r21auth:k")
	require.ErrorIs(t, err, pool.ErrAuth)
	assert.Equal(t, "auth", shard.ErrorCause(err))

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(d)
	errs := commandErrors(t, reg)
	require.Len(t, errs, 1, "%v", errs)
	for series := range errs {
		assert.Regexp(t, `^`+s.Addr+` \S+ auth$`, series)
	}
}
