package shard_test

import (
	"context"
	"io"
	"net"
	"net/netip"
	"testing"
)

// forwardFrom listens on listen and forwards each connection to backend
// until the test ends; it skips the test when listen cannot be bound.
func forwardFrom(t *testing.T, listen, backend string) {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Skipf("listen on %s: %v", listen, err)
	}
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
	}
	serveFront(t, ln, backend, func(c, b net.Conn, _ <-chan struct{}) (up, down func()) {
		return func() { pipe(b, c) }, func() { pipe(c, b) }
	})
}

// The Sentinels name the master "vm:P" (a host name) and, after a
// failover, the promoted replica "127.0.0.2:P" (the address it
// announces, on the same port). The client missed the +switch-master
// (its subscription was down), and the resolver fails: whether the two
// spellings name one server is not known. The old master still says it
// is the master (the Sentinels have not reconfigured it yet: here they
// may not). The query must install the master the Sentinels name: the
// old one is another server. Before, it kept the old master, and every
// write went to a server the Sentinels had failed over from (lost when
// it is made a replica).
func TestReview14SentinelUnknownSpellingKeepsNoFailedOverMaster(t *testing.T) {
	c, announced, old, next := missedFailover(t, func(context.Context, string) ([]netip.Addr, error) { return nil, errNoDNS })
	ctx := context.Background()
	for range 2 {
		if err := c.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats().Sentinel; st[0].Master != announced {
		t.Errorf("the Sentinels name %s, the resolver fails: the client's master is %s", announced, st[0].Master)
	}
	if _, err := c.Do(ctx, "SET", "after-failover", "1"); err != nil {
		t.Fatal(err)
	}
	if v, err := old.Do("EXISTS", "after-failover"); err != nil || v != "0" {
		t.Errorf("the write went to the old master %s (EXISTS %q, %v)", old.Addr, v, err)
	}
	if v, err := next.Do("GET", "after-failover"); err != nil || v != "1" {
		t.Errorf("the new master %s holds after-failover = %q, %v; want 1", next.Addr, v, err)
	}
}
