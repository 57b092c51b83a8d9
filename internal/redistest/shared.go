package redistest

import (
	"sync"
	"testing"
)

// SharedCluster is a Redis Cluster that the tests of a package share:
// started by the first Get (so that a run of tests that need none starts
// none) and stopped by Stop, which TestMain calls after m.Run. Every
// caller gets the same cluster, started with the one set of fields, so
// two helpers of a package cannot start it two ways. It is safe for
// concurrent use.
type SharedCluster struct {
	Masters           int     // masters, at least 3
	ReplicasPerMaster int     // replicas of each master
	Options           Options // the nodes' options (see StartCluster)

	once    sync.Once
	cluster *Cluster
	err     error
}

// Get starts the cluster on its first call (StartCluster with the
// fields) and returns it, or the error that start ended with, to this
// and every later call.
func (s *SharedCluster) Get() (*Cluster, error) {
	s.once.Do(func() {
		s.cluster, s.err = StartCluster(s.Masters, s.ReplicasPerMaster, s.Options)
	})
	return s.cluster, s.err
}

// ForTest is Get for a test: it skips tb when redis-server is not
// installed (see Require) and fails it when the cluster did not start.
func (s *SharedCluster) ForTest(tb testing.TB) *Cluster {
	tb.Helper()
	Require(tb)
	c, err := s.Get()
	if err != nil {
		tb.Fatalf("start the shared cluster: %v", err)
	}
	return c
}

// Stop stops the cluster when Get started it; it does nothing otherwise.
// It is idempotent; Get still returns the stopped cluster afterwards.
func (s *SharedCluster) Stop() error {
	s.once.Do(func() {}) // a Get from now on starts nothing
	if s.cluster == nil {
		return nil
	}
	return s.cluster.Stop()
}
