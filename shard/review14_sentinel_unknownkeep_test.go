package shard_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/redistest"
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
	host := loopbackHostName(t)
	const cliUser, cliPW = "watcher", "watcher-secret-14"
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	o.SentinelUser = "sentinel-admin"
	set := redistest.StartSentinelsTB(t, o)
	old, next := shardServers(t, set, 0)
	name := set.Names()[0]
	s := set.Sentinels[0]

	// The replica announces 127.0.0.2 and the old master's port, where a
	// forwarder reaches it.
	announced := net.JoinHostPort("127.0.0.2", strconv.Itoa(old.Port))
	forwardFrom(t, announced, next.Addr)
	for _, cmd := range [][]string{
		{"CONFIG", "SET", "replica-announce-ip", "127.0.0.2"},
		{"CONFIG", "SET", "replica-announce-port", strconv.Itoa(old.Port)},
	} {
		if _, err := next.Do(cmd...); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	// The replica announces itself on its next handshake.
	if _, err := old.Do("CLIENT", "KILL", "TYPE", "replica"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the master to list its replica at "+announced, func() bool {
		v, err := old.Do("INFO", "replication")
		return err == nil && strings.Contains(v, fmt.Sprintf("ip=127.0.0.2,port=%d,state=online", old.Port))
	})
	monitorByHostName(t, s, name, host, old.Port, 1)
	// The Sentinel may not make the old master a replica: it goes on
	// saying it is the master, as one just resumed after a pause does
	// until the Sentinels reconfigure it.
	if _, err := old.Do("ACL", "SETUSER", sentDataUser, "-replicaof", "-slaveof"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do("ACL", "SETUSER", cliUser, "on", ">"+cliPW, "~*", "&*", "+@all"); err != nil {
		t.Fatal(err)
	}

	cfg := sentinelConfig(set)
	cfg.Sentinel.Addrs = []string{s.Addr}
	cfg.Sentinel.Username, cfg.Sentinel.Password = cliUser, cliPW
	cfg.Sentinel.RefreshInterval = -1 // queries come from Refresh
	c := newClient(t, cfg)
	ctx := context.Background()
	byName := fmt.Sprintf("%s:%d", host, old.Port)
	if st := c.Stats().Sentinel; len(st) != 1 || st[0].Master != byName {
		t.Fatalf("Sentinel stats %+v: want the master taken as %s", st, byName)
	}
	waitFor(t, 10*time.Second, "the subscription", func() bool { return c.Stats().Sentinel[0].Subscribed == 1 })

	// The client's subscription goes down: it misses the +switch-master.
	if _, err := s.Do("ACL", "SETUSER", cliUser, "off"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do("CLIENT", "KILL", "USER", cliUser); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the subscription to be lost", func() bool { return c.Stats().Sentinel[0].Subscribed == 0 })

	waitFor(t, 30*time.Second, "the Sentinel to start a failover", func() bool {
		_, err := s.Do("SENTINEL", "FAILOVER", name)
		return err == nil || strings.Contains(err.Error(), "INPROG")
	})
	waitFor(t, 30*time.Second, "the Sentinel to name the master "+announced, func() bool {
		m, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
		return err == nil && m == "127.0.0.2\n"+strconv.Itoa(old.Port)
	})
	if v, err := old.Do("ROLE"); err != nil || !strings.HasPrefix(v, "master") {
		t.Fatalf("the old master's ROLE: %q, %v; want master", v, err)
	}

	t.Cleanup(addrkey.SetLookupForTest(func(context.Context, string) ([]netip.Addr, error) { return nil, errNoDNS }))
	if _, err := s.Do("ACL", "SETUSER", cliUser, "on"); err != nil {
		t.Fatal(err)
	}
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
