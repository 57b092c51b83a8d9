package shard_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview15DoKeyDoesNotPullAKeyToAnotherOwner: DoKey runs a command
// at the routing key's node whatever its own keys are; during a
// migration its own keys move first, to that node. A key the new
// topology places elsewhere was pulled there all the same, and
// remembered as moved: the value left its owner's way (a GET at its new
// owner found nothing, and no later command moved it back), while the
// same DoKey without a migration leaves it where it is. Such a key stays
// on its way to its own owner; the command meets at the routing node
// what it would meet there without a migration.
func TestReview15DoKeyDoesNotPullAKeyToAnotherOwner(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	old := newClient(t, from)
	c := newClient(t, armedConfig(from, to))
	var key, route string
	for _, k := range movingKeys(t, from, to, "r15dk:", 20) {
		for i := 0; route == "" && i < 1000; i++ {
			if r := fmt.Sprint("r15route:", i); ringOwner(t, to, r) != ringOwner(t, to, k) {
				key, route = k, r
			}
		}
		if route != "" {
			break
		}
	}
	require.NotEmpty(t, route)
	_, err := old.Do(ctx, "SET", key, "10")
	require.NoError(t, err)

	n, err := redis.Int(c.DoKey(ctx, route, "INCRBY", key, 5))
	require.NoError(t, err)
	assert.Equal(t, 5, n, "INCRBY ran at the routing key's node, which does not hold the key")
	v, err := redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err, "the value is still on its owner's way")
	assert.Equal(t, "10", v)
	at := holders(t, servers, key)
	assert.True(t, slices.Contains(at, ringOwner(t, from, key)) || slices.Contains(at, ringOwner(t, to, key)),
		"%s at its old or new owner: %v", key, at)
}

// TestReview15DoKeyIntoClusterMovesTheKeysOfItsNode: into a cluster,
// DoKey's routing key and the command's own key may hash to different
// slots of one master: the key belongs with the command there and moves
// first; one of another master's slot does not.
func TestReview15DoKeyIntoClusterMovesTheKeysOfItsNode(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	old := newClient(t, ringConfig(servers))
	c := newClient(t, ringConfig(servers))
	require.NoError(t, c.StartMigration(ctx, clusterConfig(rc.Seeds()...)))
	require.NoError(t, c.ArmMigration())
	master := func(k string) string {
		m, err := rc.MasterOfSlot(cluster.Slot(k))
		require.NoError(t, err)
		return m.Addr
	}
	const same, other = "r15c:same", "r15c:other"
	var sameRoute, otherRoute string
	for i := 0; sameRoute == "" || otherRoute == ""; i++ {
		require.Less(t, i, 10000)
		r := fmt.Sprint("r15croute:", i)
		switch {
		case sameRoute == "" && master(r) == master(same) && cluster.Slot(r) != cluster.Slot(same):
			sameRoute = r
		case otherRoute == "" && master(r) != master(other):
			otherRoute = r
		}
	}
	for _, k := range []string{same, other} {
		_, err := old.Do(ctx, "SET", k, "10")
		require.NoError(t, err)
	}
	n, err := redis.Int(c.DoKey(ctx, sameRoute, "INCRBY", same, 5))
	require.NoError(t, err)
	assert.Equal(t, 15, n, "the key of the routing key's master moved first")
	n, err = redis.Int(c.DoKey(ctx, otherRoute, "INCRBY", other, 5))
	require.NoError(t, err)
	assert.Equal(t, 5, n, "INCRBY ran at another master than the key's")
	v, err := redis.String(c.Do(ctx, "GET", other))
	require.NoError(t, err, "the value is still on its owner's way")
	assert.Equal(t, "10", v)
}
