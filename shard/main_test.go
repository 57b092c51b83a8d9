package shard_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"go.uber.org/goleak"
)

// sharedCluster is one 3-master + 3-replica Redis Cluster that the
// package's cluster tests share (each test uses its own key prefix); tests
// that break a cluster start their own.
var (
	sharedOnce    sync.Once
	sharedCluster *redistest.Cluster
	sharedErr     error
)

func clusterForTest(t *testing.T) *redistest.Cluster {
	t.Helper()
	redistest.Require(t)
	sharedOnce.Do(func() {
		sharedCluster, sharedErr = redistest.StartCluster(3, 1, redistest.Options{})
	})
	if sharedErr != nil {
		t.Fatalf("start the shared cluster: %v", sharedErr)
	}
	return sharedCluster
}

// TestMain stops the shared cluster, then fails the package when any test
// left a goroutine behind: clients must stop every background loop and
// worker on Close.
func TestMain(m *testing.M) {
	skipExamplesWithoutRedis()
	code := m.Run()
	stopExampleServers()
	if sharedCluster != nil {
		if err := sharedCluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop shared cluster:", err)
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
