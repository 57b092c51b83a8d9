package shard_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"go.uber.org/goleak"
)

// shared is one 3-master + 3-replica Redis Cluster that the package's
// cluster tests and examples share (each uses its own key prefix); tests
// that break a cluster start their own.
var shared = &redistest.SharedCluster{Masters: 3, ReplicasPerMaster: 1}

// clusterForTest returns the shared cluster, started on first use.
func clusterForTest(t *testing.T) *redistest.Cluster {
	t.Helper()
	return shared.ForTest(t)
}

// TestMain stops the shared cluster, then fails the package when any test
// left a goroutine behind: clients must stop every background loop and
// worker on Close.
func TestMain(m *testing.M) {
	skipExamplesWithoutRedis()
	code := m.Run()
	stopExampleServers()
	if err := shared.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop shared cluster:", err)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
