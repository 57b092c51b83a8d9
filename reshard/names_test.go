package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMoverJudgesAClientByTheTopologyItMigratedTo: a process that moved
// from A to B at run time (StartMigration, FinishMigration) routes by B,
// and its connections say so. For a later migration B -> C, the mover
// refuses it while it is on B alone, naming B (not A, the topology its
// client was created with), accepts it once it migrates to C, and
// finishes once it is on C alone.
func TestMoverJudgesAClientByTheTopologyItMigratedTo(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	const auto = "&client_name=auto"
	a := mustParse(t, ringURL(servers[:2], []string{"s0", "s1"}, nil)+auto)
	b := mustParse(t, ringURL(servers[:3], []string{"s0", "s1", "s2"}, nil)+auto)
	cc := mustParse(t, ringURL(servers, []string{"s0", "s1", "s2", "s3"}, nil)+auto)
	idA, idB := shard.TopologyID(a), shard.TopologyID(b)
	require.NotEqual(t, idA, idB)

	c := newClient(t, a)
	prefix := "shardis:" + c.InstanceID() + ":"
	const n = 300
	for i := range n {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("k:%d", i), i)
		require.NoError(t, err)
	}
	// A -> B at run time, the process alone: it arms itself and moves
	// every key by touching it.
	require.NoError(t, c.StartMigration(ctx, b))
	require.NoError(t, c.ArmMigration())
	for i := range n {
		_, err := c.Do(ctx, "INCR", fmt.Sprintf("k:%d", i))
		require.NoError(t, err)
	}
	require.NoError(t, c.FinishMigration())

	// B -> C: the process routes by B alone. Each of its connections on
	// B's nodes is refused, named after B.
	waitFor(t, 5*time.Second, "the beacons of A>B to close", func() bool {
		err := reshard.CheckClients(ctx, b, cc, false)
		var ce *reshard.ClientsError
		if !errors.As(err, &ce) {
			return false
		}
		for _, conn := range ce.Conns {
			if strings.Contains(conn.Name, ">") {
				return false
			}
		}
		return true
	})
	err := reshard.CheckClients(ctx, b, cc, false)
	var ce *reshard.ClientsError
	require.ErrorAs(t, err, &ce)
	require.NotEmpty(t, ce.Conns)
	for _, conn := range ce.Conns {
		assert.Equal(t, prefix+idB, conn.Name, "the connection %s on %s", conn.ID, conn.Node)
		assert.Contains(t, conn.Reason, "routes by topology "+idB+" alone")
		assert.NotContains(t, conn.Reason, idA)
	}
	// The servers agree: nothing of this process is named after A.
	for _, s := range servers {
		list, err := s.Do("CLIENT", "LIST")
		require.NoError(t, err)
		assert.NotContains(t, list, " name="+prefix+idA+" ", "on %s", s.Addr)
	}
	_, err = reshard.Move(ctx, reshard.Options{From: b, To: cc})
	require.ErrorAs(t, err, &ce, "the mover refuses to start")

	// The process migrates to C: accepted; the move runs to its end, and
	// once the process is on C alone the migration finishes.
	require.NoError(t, c.StartMigration(ctx, cc))
	require.NoError(t, reshard.CheckClients(ctx, b, cc, false))
	rep, err := reshard.Move(ctx, reshard.Options{From: b, To: cc})
	require.NoError(t, err)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	waitArmed(t, c, "the client to see the armed marker")
	require.NoError(t, c.FinishMigration())
	_, err = reshard.Finish(ctx, b, cc)
	require.NoError(t, err)
	for i := range n {
		v, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("k:%d", i)))
		require.NoError(t, err)
		assert.Equal(t, i+1, v)
	}
}
