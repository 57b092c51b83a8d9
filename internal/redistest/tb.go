package redistest

import (
	"testing"
)

// logLines is how many log lines StartTB and friends print for each
// server when the test failed.
const logLines = 50

// StartTB is Start for tests and benchmarks: it calls Require (so the test
// is skipped, or failed under CI, when redis-server is missing), fails the
// test if the server cannot start, prints the last 50 lines of the server
// log when the test has failed, and stops the server when the test ends.
func StartTB(tb testing.TB, opts Options) *Server {
	tb.Helper()
	Require(tb)
	s, err := Start(opts)
	if err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	cleanup(tb, s)
	return s
}

// StartNTB is StartN for tests; see StartTB.
func StartNTB(tb testing.TB, n int, opts Options) []*Server {
	tb.Helper()
	Require(tb)
	servers, err := StartN(n, opts)
	if err != nil {
		tb.Fatalf("start %d redis-servers: %v", n, err)
	}
	for _, s := range servers {
		cleanup(tb, s)
	}
	return servers
}

// StartClusterTB is StartCluster for tests; see StartTB. The logs of all
// nodes are printed when the test failed.
func StartClusterTB(tb testing.TB, masters, replicasPerMaster int, opts Options) *Cluster {
	tb.Helper()
	Require(tb)
	c, err := StartCluster(masters, replicasPerMaster, opts)
	if err != nil {
		tb.Fatalf("start redis cluster: %v", err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			for _, s := range c.Nodes {
				logTail(tb, s)
			}
		}
		if err := c.Stop(); err != nil {
			tb.Errorf("stop redis cluster: %v", err)
		}
	})
	return c
}

func cleanup(tb testing.TB, s *Server) {
	tb.Cleanup(func() {
		if tb.Failed() {
			logTail(tb, s)
		}
		if err := s.Stop(); err != nil {
			tb.Errorf("stop redis-server %s: %v", s.Addr, err)
		}
	})
}

func logTail(tb testing.TB, s *Server) {
	tb.Logf("redis-server %s log (last %d lines):\n%s", s.Addr, logLines, tail(s.Log(), logLines))
}
