package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/stretchr/testify/require"
)

// TestReview12FailedNodeStaysWhenOneMasterRefusesAndTheOthersHang: the
// client's ACL user may run neither CLUSTER NODES nor CLUSTER SHARDS on
// one master (ACLs are per node), and may on the others, which hang
// (stopped) at the refresh. The one refusal is not a listing, and the
// masters that could have listed the cluster did not answer: the failed
// replica, still listed by the cluster, must stay (checked, in Stats),
// as when every master hangs.
func TestReview12FailedNodeStaysWhenOneMasterRefusesAndTheOthersHang(t *testing.T) {
	ctx := context.Background()
	rc, cfg := failedNodeCluster(t)
	require.Len(t, rc.Masters(), 3)
	for _, s := range rc.Nodes {
		_, err := s.Do("ACL", "SETUSER", "lister", "on", ">pw", "~*", "&*", "+@all")
		require.NoError(t, err)
	}
	refusing := rc.Masters()[0]
	_, err := refusing.Do("ACL", "SETUSER", "lister", "-cluster|nodes", "-cluster|shards")
	require.NoError(t, err)
	cfg.Health.Interval = -1 // nothing marks the masters down: they are asked
	cfg.Pool = pool.Options{Username: "lister", Password: "pw", DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, WriteTimeout: time.Second}
	c := newClient(t, cfg)

	victim, masters := failReplica(t, rc)
	require.NoError(t, c.Refresh(ctx))
	require.NotEmpty(t, nodeStats(c, victim.Addr), "the failed replica, still listed by the cluster, is kept")

	var paused int
	for _, m := range masters {
		if m.Addr != refusing.Addr {
			pauseUntilCleanup(t, m)
			paused++
		}
	}
	require.Equal(t, 2, paused)
	err = c.Refresh(ctx) // the replicas and the refusing master answer
	kept := len(nodeStats(c, victim.Addr)) > 0
	for _, m := range masters {
		if m.Addr != refusing.Addr {
			require.NoError(t, m.Resume())
		}
	}
	require.NoError(t, err)
	require.True(t, kept, "a refresh where one master refused the node list and the others did not answer keeps the failed replica")
}

// TestReview12FailedNodeRetiresWhenEveryMasterRefuses: every master
// refuses both CLUSTER NODES and CLUSTER SHARDS to the client's ACL user.
// The client can never tell whether the cluster still lists a failed
// replica, and a forgotten node must not be checked for good: it retires
// once it leaves the slot table.
func TestReview12FailedNodeRetiresWhenEveryMasterRefuses(t *testing.T) {
	ctx := context.Background()
	rc, cfg := failedNodeCluster(t)
	for _, s := range rc.Nodes {
		_, err := s.Do("ACL", "SETUSER", "lister", "on", ">pw", "~*", "&*", "+@all", "-cluster|nodes", "-cluster|shards")
		require.NoError(t, err)
	}
	cfg.Health.Interval = -1
	cfg.Pool.Username, cfg.Pool.Password = "lister", "pw"
	c := newClient(t, cfg)
	victim, _ := failReplica(t, rc)
	require.NotEmpty(t, nodeStats(c, victim.Addr), "the replica is in Stats before the refresh")
	require.NoError(t, c.Refresh(ctx))
	require.Empty(t, nodeStats(c, victim.Addr), "with every master refusing the node list, the failed replica retires")
}
