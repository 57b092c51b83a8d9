package shard_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
)

// Steps shared by the tests that demote a master under a blocking call
// (BLPOP) or under reads and writes, and check what the caller gets once
// the master's replica took over.

// failOverSlot has rep, a replica of slot's master in rc, take over with
// CLUSTER FAILOVER, and waits for rc to name rep the slot's master.
func failOverSlot(t *testing.T, rc *redistest.Cluster, rep *redistest.Server, slot int) {
	t.Helper()
	_, err := rep.Do("CLUSTER", "FAILOVER")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the replica to take over", func() bool {
		owner, err := rc.MasterOfSlot(slot)
		return err == nil && owner.Addr == rep.Addr
	})
}

// awaitBlockedAgain waits up to wait for a blocking call to wait on s
// again (s counts a blocked client), and returns when it does or the time
// is up. A result on done before that is handed to early, which must fail
// the test: nothing was pushed yet, so the call had nothing to return.
func awaitBlockedAgain[R any](t *testing.T, s *redistest.Server, wait time.Duration, done <-chan R, early func(R)) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for blockedClients(s) < 1 && time.Now().Before(deadline) {
		select {
		case r := <-done:
			early(r)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
