package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestClusterScanOfADownMasterFails: a Scan whose SCAN on one master
// cannot be sent (the master is down, no replica to take over) fails. The
// SCAN is addressed to that node, not to a slot: a retry that sent it to
// slot 0's master instead read another node's keyspace, filtered it away
// as not the node's, and ended without error and without the down
// master's keys.
func TestClusterScanOfADownMasterFails(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.MaxRetryWait = 2 * time.Second
	c := newClient(t, cfg)
	for i := 0; i < 300; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("scan:%d", i), i)
		require.NoError(t, err)
	}
	owner0, err := rc.MasterOfSlot(0)
	require.NoError(t, err)
	victim, err := rc.OtherMaster(owner0)
	require.NoError(t, err)
	victimKeys := 0
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("scan:%d", i)
		if o, _ := rc.MasterOfSlot(cluster.Slot(k)); o.Addr == victim.Addr {
			victimKeys++
		}
	}
	require.Positive(t, victimKeys)
	require.NoError(t, victim.Kill())

	s := c.Scan(shard.ScanOptions{Count: 10})
	n := 0
	for s.Next(ctx) {
		n++
	}
	require.Error(t, s.Err(), "Scan saw %d of 300 keys and ended without error; the down master had %d", n, victimKeys)
	var re *shard.RetryError
	require.ErrorAs(t, s.Err(), &re)
	require.LessOrEqual(t, n, 300-victimKeys)
}
