package reshard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// yearsRouter keeps 2020 (and, with moved21, 2021) on node b, every other
// key on node a: both placements use the same two nodes. id, when set,
// names the placement (shard.TopologyIDer).
type yearsRouter struct {
	a, b    shard.Node
	moved21 bool
}

func (r yearsRouter) Route(key string) (shard.Node, error) {
	if strings.HasPrefix(key, "y2020:") || r.moved21 && strings.HasPrefix(key, "y2021:") {
		return r.b, nil
	}
	return r.a, nil
}

func (r yearsRouter) Nodes() []shard.Node { return []shard.Node{r.a, r.b} }

type namedYearsRouter struct {
	yearsRouter
	id string
}

func (r namedYearsRouter) TopologyID() string { return r.id }

// TestReview9MoverBetweenPlacementsOfTheSameNodes: two Routers over the
// same nodes had one TopologyID, and the mover took its own connections
// (named after the migration) for those of a mover of the opposite
// migration, refusing to run with ErrMoverRunning after a second. It is
// refused at once as a bad config naming TopologyIDer, and Routers that
// name their placements move.
func TestReview9MoverBetweenPlacementsOfTheSameNodes(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	a := shard.Node{Name: "a", Addr: servers[0].Addr}
	b := shard.Node{Name: "b", Addr: servers[1].Addr}
	_, err := servers[0].Do("SET", "y2021:x", "1")
	require.NoError(t, err)

	_, err = reshard.Move(ctx, reshard.Options{From: shard.Config{Router: yearsRouter{a: a, b: b}},
		To: shard.Config{Router: yearsRouter{a: a, b: b, moved21: true}}, SkipClientCheck: true})
	require.Error(t, err)
	assert.ErrorIs(t, err, shard.ErrBadConfig)
	assert.NotErrorIs(t, err, reshard.ErrMoverRunning)
	assert.Contains(t, err.Error(), "TopologyIDer")

	rep, err := reshard.Move(ctx, reshard.Options{
		From:            shard.Config{Router: namedYearsRouter{yearsRouter{a: a, b: b}, "years-v1"}},
		To:              shard.Config{Router: namedYearsRouter{yearsRouter{a: a, b: b, moved21: true}, "years-v2"}},
		SkipClientCheck: true})
	require.NoError(t, err)
	assert.EqualValues(t, 1, rep.Moved)
	v, err := servers[1].Do("GET", "y2021:x")
	require.NoError(t, err)
	assert.Equal(t, "1", v)
}

// TestReview9TopologyIDWithAnArrow: a Router names its placement as it
// likes (TopologyIDer), but the names of the processes' connections put
// both sides of a migration around a ">" ("shardis:<i>:migrating:A>B").
// An ID with a ">" of its own was cut at the wrong place, so the mover
// took the migrating process's beacons for those of another migration and
// refused to arm. The ID is kept out of the way of the separators.
func TestReview9TopologyIDWithAnArrow(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	a := shard.Node{Name: "a", Addr: servers[0].Addr}
	b := shard.Node{Name: "b", Addr: servers[1].Addr}
	from := shard.Config{Router: namedYearsRouter{yearsRouter{a: a, b: b}, "years->2020"}}
	to := shard.Config{Router: namedYearsRouter{yearsRouter{a: a, b: b, moved21: true}, "years->2021"}}
	assert.NotContains(t, shard.TopologyID(from), ">")

	cfg := to
	f := from
	cfg.Migration = &shard.Migration{From: &f}
	cfg.Pool.ClientName = shard.AutoClientName
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Do(ctx, "SET", "y2022:a", "v") // a pooled connection on the old nodes too
	require.NoError(t, err)

	require.NoError(t, reshard.Arm(ctx, from, to, reshard.ArmOptions{}))
	waitFor(t, 10*time.Second, "the process to arm", func() bool {
		info, _ := c.Migration()
		return info.Phase == shard.PhaseArmed
	})
}
