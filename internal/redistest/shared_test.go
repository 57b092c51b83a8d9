package redistest

import "testing"

// TestSharedClusterStartsOnceAndStops: every Get returns the one cluster
// the first started; Stop stops its nodes, twice without harm; a Stop
// with no Get before it starts nothing.
func TestSharedClusterStartsOnceAndStops(t *testing.T) {
	Require(t)
	unused := &SharedCluster{Masters: 3}
	if err := unused.Stop(); err != nil {
		t.Fatalf("Stop before any Get: %v", err)
	}
	if c, err := unused.Get(); c != nil || err != nil {
		t.Fatalf("Get after Stop = %v, %v; want nothing started", c, err)
	}

	s := &SharedCluster{Masters: 3}
	c1, err := s.Get()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c1.Stop() })
	c2, err := s.Get()
	if err != nil || c2 != c1 {
		t.Fatalf("second Get = %p, %v; want the first cluster %p", c2, err, c1)
	}
	if c3 := s.ForTest(t); c3 != c1 {
		t.Fatalf("ForTest = %p, want the first cluster %p", c3, c1)
	}
	if _, err := c1.Nodes[0].Do("PING"); err != nil {
		t.Fatalf("a node of the shared cluster: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for _, n := range c1.Nodes {
		if n.running() {
			t.Errorf("%s still runs after Stop", n.Addr)
		}
	}
}
