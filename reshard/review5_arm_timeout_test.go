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
	"github.com/stretchr/testify/require"
)

// TestReview5ArmTimeoutSaysWhatItWaitedFor: a process whose beacon never
// acknowledges the fence (stuck, or still running commands it planned by
// the old topology) makes Arm give up after ArmOptions.Timeout. The error
// names the connection, says that it is late (not that it breaks the
// protocol), how long Arm waited, and that the fence stays "fenced":
// moving keys wait until a later Arm completes.
func TestReview5ArmTimeoutSaysWhatItWaitedFor(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := mustParse(t, ringURL(servers[:1], []string{"s0"}, nil))
	to := mustParse(t, ringURL(servers, []string{"s0", "s1"}, nil))
	beacon := fmt.Sprintf("shardis:late1:migrating:%s>%s", shard.TopologyID(from), shard.TopologyID(to))
	if _, ok := shard.ParseClientName(beacon); !ok {
		t.Fatalf("%q is no beacon name", beacon)
	}
	c, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Do("CLIENT", "SETNAME", beacon)
	require.NoError(t, err)

	err = reshard.Arm(ctx, from, to, reshard.ArmOptions{Timeout: 300 * time.Millisecond})
	require.Error(t, err)
	t.Log(err)
	require.True(t, errors.Is(err, reshard.ErrClients), "%v", err)
	var ce *reshard.ClientsError
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Len(t, ce.Conns, 1)
	require.Equal(t, beacon, ce.Conns[0].Name)
	msg := err.Error()
	require.Contains(t, msg, beacon)
	require.Contains(t, msg, "300ms", "how long Arm waited")
	require.Contains(t, msg, `"fenced"`, "the state the fence is left in")
	require.False(t, strings.Contains(msg, "do not follow the migration protocol"), "a late beacon follows the protocol: %s", msg)
}
