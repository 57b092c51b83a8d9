package shard_test

import (
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// startSentinelSetApart is startSentinelSet with one shard whose harness
// (and replication) logs in as a user of its own, and the client as
// sentDataUser, so that a test can change the client's account on a node
// without locking the harness out.
func startSentinelSetApart(t *testing.T) *redistest.SentinelSet {
	t.Helper()
	opts := sentinelSetOptions(1)
	opts.Data.Users = []redistest.User{{Name: "harness", Password: "harness-secret"}, {Name: sentDataUser, Password: sentDataPW}}
	return redistest.StartSentinelsTB(t, opts)
}

// shardServers returns the current master and replica of the set's shard i.
func shardServers(t *testing.T, set *redistest.SentinelSet, i int) (master, replica *redistest.Server) {
	t.Helper()
	master, err := set.Master(i)
	if err != nil {
		t.Fatal(err)
	}
	replica, err = set.Replica(i)
	if err != nil {
		t.Fatal(err)
	}
	return master, replica
}
